// The metrics wire protocol: one JSON object per line, sent by any rank to the harness.
// This header is the protocol's single definition (docs/metrics-protocol.md describes it
// for other languages). Workloads and the harness both use it; it knows nothing else.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "common/values/labels.h"

namespace chaosbench::bench {

// Label and field values: the one type of common/values/labels.h.
using common::LabelValue;
using common::Labels;

// {"type":"sample","rank":0,"time":1764450000.25,"name":"comm/latency","value":812.5,
//  "unit":"us","labels":{"collective":"allreduce","bytes":16777216}}
struct Sample {
  int rank = 0;
  double time = 0;  // seconds since the Unix epoch, as the rank's clock read it
  std::string name;
  double value = 0;
  std::string unit;
  Labels labels;
};

// {"type":"event","rank":0,"time":1764450000.25,"name":"step","fields":{"step":150}}
// The harness knows a few event names (see docs/metrics-protocol.md): "step" drives
// at_step triggers.
struct Event {
  int rank = 0;
  double time = 0;
  std::string name;
  Labels fields;
};

using Record = std::variant<Sample, Event>;

// Ranks are below this (a cluster of a million ranks is far beyond any run here); a record
// with a larger one is malformed, so a rank cannot make the harness size tables by it.
inline constexpr std::int64_t kMaxRank = 1 << 20;

struct DecodeResult {
  bool ok = false;
  Record record;
  std::string error;  // why the line is malformed, when !ok
};

// Decodes one line (without its newline). Never throws: malformed input is an error
// result that the harness counts. Refuses JSON nested deeper than common::kMaxJsonDepth,
// integer labels above INT64_MAX (never wrapped) and ranks outside 0..kMaxRank-1.
DecodeResult decode_record(std::string_view line);

// Encodes one record as a single line, newline included.
std::string encode_record(const Record& record);

// Seconds since the Unix epoch, the clock every record's "time" uses.
double wall_time_now();

using common::label_to_string;  // renders a label value the way results.json does

}  // namespace chaosbench::bench
