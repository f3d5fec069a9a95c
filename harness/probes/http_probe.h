// An http probe: GET a URL (from a node's namespace, or this process's) and judge the
// status and, optionally, one JSON field of the answer ("/data/ready" true, "/queue" <= 10,
// "/status" equals "ok").
#pragma once

#include "harness/probes/probe_check.h"

namespace chaosbench::harness::probes {

class HttpProbe : public ProbeCheck {
 public:
  HttpProbe(ProbeSpec spec, ProbeContext ctx);

  // Passes when an answer comes within the timeout with a status in expect_status (any
  // 2xx when that is empty) and, with json_field, the field exists and its number (true
  // and false count 1 and 0) keeps min/max, or its text (a string's own, else its JSON)
  // equals `equals`. Blocks up to the timeout.
  ProbeOutcome evaluate(double now_wall) override;

 private:
  ProbeSpec spec_;
  ProbeContext ctx_;
};

// Judges one answer (status, body) by the probe's rules; `what` starts the evidence
// ("GET http://10.0.0.2:8000/ready"). Pure: the tests feed it answers directly.
ProbeOutcome judge_http_answer(const ProbeSpec& spec, const std::string& what, int status, const std::string& body);

}  // namespace chaosbench::harness::probes
