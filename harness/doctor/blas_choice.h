// Which BLAS kernel the workers get, and the CPU's peak they are measured against.
//
// OpenBLAS (DYNAMIC_ARCH) picks its kernel from the CPU's model when it loads. A CPU it
// does not know (a VM's generic "Intel Xeon Processor") gets an old fallback: on some
// machine types the SSE3 "Prescott" kernel at a fifth of the speed the CPU can run. The
// harness therefore probes: one subprocess (`chaosbench worker blas-probe`) for the
// library's own choice and one per candidate kernel the CPU's flags allow, each with
// OPENBLAS_CORETYPE set before the library loads; each one's results are checked against
// a reference (some builds compute wrong results with some kernels on some CPUs), and
// the workers get the fastest correct one. The CPU's peak (bench/blas/cpu_peak.h) is
// measured with it, for train/mfu_hw.
//
// The probe (a few seconds; at most 30 s a kernel) runs once per host: its result is
// cached, keyed by the CPU (vendor, family, model, stepping, name, flags), the library
// file and this chaosbench version, in CHAOSBENCH_CACHE_DIR, else /var/cache/chaosbench as
// root, else ~/.cache/chaosbench — only in a directory of this user's that nobody else
// can write, and only a probe that looks undisturbed (no kernel timed out, none beat the
// CPU's peak). The CPU's peak is measured in this process (no BLAS in it).
// A user's OPENBLAS_CORETYPE (in the harness's environment or the scenario's `env`) is
// always respected; a run then probes nothing (a cached probe still reports the others).
// Blocking; call from one thread.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

// The choice and its evidence: the library, the library's own kernel, the fastest correct
// one, the one the workers get and why (source: "probe", "cache", "environment",
// "scenario" or "unavailable"), every candidate tried, and the CPU's peak per core.
using BlasChoice = reports::BlasRecord;

struct BlasChoiceOptions {
  std::string self_exe;       // the chaosbench binary, for `worker blas-probe`; "": this one
  std::string cache_dir;      // "": default_blas_cache_dir()
  bool use_cache = true;      // false: probe again (and refresh the cache)
  std::string user_coretype;  // the user's OPENBLAS_CORETYPE, "" when unset
  std::string user_source = "environment";  // where user_coretype came from
  bool probe_anyway = false;  // with user_coretype and no cache: probe all the same (doctor)
};

// Never throws for a failed probe: the choice then says "unavailable" and why.
BlasChoice choose_blas(const BlasChoiceOptions& options);

// The decision alone, pure: from b.candidates (the library's own choice first) fills in
// detected, best, chosen and reason, and source when the user set OPENBLAS_CORETYPE (else
// it stays as given: "probe" or "cache"). The library's own kernel is kept when it is
// correct and within 3% of the fastest; "unavailable" when no candidate is usable.
void decide_blas(BlasChoice& b, const BlasChoiceOptions& options);

// The OPENBLAS_CORETYPE names worth trying on a CPU with these /proc/cpuinfo flags (and
// vendor_id), fastest family first; empty off x86-64.
std::vector<std::string> blas_candidates(const std::set<std::string>& flags, const std::string& vendor);

std::string default_blas_cache_dir();

// "OpenBLAS: detected Prescott (19.8 GFLOP/s); chosen SkylakeX (101.2 GFLOP/s): ..." for logs.
std::string describe(const BlasChoice& choice);

}  // namespace chaosbench::harness
