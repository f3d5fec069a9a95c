// Typed reads of label and event-field values by key. Labels keep their JSON flavour
// (reports::Labels; bench::Labels, an event's fields, is the same map type), so a
// number may arrive as an integer or a real.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "bench/protocol/record.h"
#include "reports/run_model.h"

namespace chaosbench::harness {

static_assert(std::is_same_v<bench::Labels, reports::Labels>, "event fields are read with the label helpers");

// The value as a double when it is a number; nullopt when absent or a string.
std::optional<double> number_label(const reports::Labels& labels, const char* key);

// The value rendered as results.json does; empty when absent.
std::string string_label(const reports::Labels& labels, const char* key);

}  // namespace chaosbench::harness
