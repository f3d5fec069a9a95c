// The environment fingerprint of this host for results.json (reports/model/run_model.h
// Environment): the testbed label (CHAOSBENCH_TESTBED), CPU model and ISA extensions,
// memory, GPUs, the compiler and commit of this build, and the resolved scenario's hash.
// Reads /proc (and /proc/driver/nvidia where a driver is loaded); never fails: what
// cannot be read stays empty.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

void add_host_fingerprint(reports::Environment& env);

// SHA-256 of `text`, in hex.
std::string sha256_hex(const std::string& text);

}  // namespace chaosbench::harness
