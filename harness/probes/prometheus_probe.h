// A prometheus probe: an instant PromQL query against a Prometheus HTTP API
// (GET BASE/api/v1/query?query=...), the first sample of the answer judged by min/max.
// The answer's format is Prometheus's documented one:
//   {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[1712.3,"0.41"]}]}}
//   {"status":"error","errorType":"bad_data","error":"1:5: parse error: ..."}
#pragma once

#include <string_view>

#include "harness/probes/probe_check.h"

namespace chaosbench::harness::probes {

class PrometheusProbe : public ProbeCheck {
 public:
  PrometheusProbe(ProbeSpec spec, ProbeContext ctx);

  // Blocks up to the timeout. Fails when the server does not answer, answers an error
  // (evidence: its errorType and error), answers an empty result (nothing to judge:
  // the series is absent), a matrix or a string, or a first value outside min/max.
  ProbeOutcome evaluate(double now_wall) override;

 private:
  ProbeSpec spec_;
  ProbeContext ctx_;
};

// BASE/api/v1/query?query=QUERY with QUERY percent-encoded (RFC 3986: every byte but
// A-Z a-z 0-9 - . _ ~), a trailing '/' of BASE dropped. Pure.
std::string instant_query_url(std::string_view base, std::string_view query);

// Judges the body of a query answer (whatever the HTTP status: Prometheus sends its
// errors as JSON with 400, 422 or 503). `what` starts the evidence. Pure.
ProbeOutcome judge_prometheus_answer(const ProbeSpec& spec, const std::string& what, int status, const std::string& body);

}  // namespace chaosbench::harness::probes
