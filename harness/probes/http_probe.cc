#include "harness/probes/http_probe.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/json/json_limits.h"
#include "harness/probes/probe_support.h"

namespace chaosbench::harness::probes {
namespace {

bool status_expected(const ProbeSpec& spec, int status) {
  if (spec.expect_status.empty()) return status >= 200 && status <= 299;
  return std::find(spec.expect_status.begin(), spec.expect_status.end(), status) != spec.expect_status.end();
}

// A value for evidence, cut short: an answer may be large or hostile.
std::string excerpt(const nlohmann::json& v) {
  std::string text = v.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

ProbeOutcome judge_field(const ProbeSpec& spec, const std::string& what, const nlohmann::json& field) {
  const std::string head = fmt::format("{}: {}", what, spec.json_field);
  if (spec.equals) {
    const std::string text = field.is_string() ? field.get<std::string>() : field.dump();
    if (text == *spec.equals) return ProbeOutcome{true, std::nullopt, fmt::format("{} is {}", head, excerpt(field))};
    return failed(fmt::format("{} is {}, expected {}", head, excerpt(field), excerpt(nlohmann::json(*spec.equals))));
  }
  double value = 0;
  if (field.is_boolean()) value = field.get<bool>() ? 1 : 0;
  else if (field.is_number()) value = field.get<double>();
  else return failed(fmt::format("{} is {}, not a number or true/false", head, excerpt(field)));
  const std::string violation = bound_violation(value, spec);
  std::string evidence = fmt::format("{} is {}", head, excerpt(field));
  if (!violation.empty()) evidence += " " + violation;
  return ProbeOutcome{violation.empty(), value, std::move(evidence)};
}

}  // namespace

ProbeOutcome judge_http_answer(const ProbeSpec& spec, const std::string& what, int status, const std::string& body) {
  if (!status_expected(spec, status))
    return ProbeOutcome{false, status, fmt::format("{}: status {} (expected {})", what, status,
                                                   spec.expect_status.empty() ? std::string("2xx")
                                                                              : fmt::format("{}", fmt::join(spec.expect_status, ", ")))};
  if (spec.json_field.empty()) return ProbeOutcome{true, status, fmt::format("{}: status {}", what, status)};
  std::string error;
  const auto doc = common::parse_json_bounded(body, &error);
  if (doc.is_discarded()) return failed(fmt::format("{}: status {}, the answer is {}", what, status, error));
  const nlohmann::json::json_pointer pointer(spec.json_field);  // checked by the parser
  if (!doc.contains(pointer)) return failed(fmt::format("{}: status {}, the answer has no {}", what, status, spec.json_field));
  return judge_field(spec, what, doc.at(pointer));
}

HttpProbe::HttpProbe(ProbeSpec spec, ProbeContext ctx) : spec_(std::move(spec)), ctx_(std::move(ctx)) {}

ProbeOutcome HttpProbe::evaluate(double /*now_wall*/) {
  return guarded([&] {
    http::Request request;
    request.url = expand_node_addresses(spec_.url, ctx_);
    request.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(spec_.timeout.value);
    request.max_body = 1u << 20;  // a health answer is small; a huge one is a failure, not a stall
    const std::string what = "GET " + request.url;
    const http::Response response = fetch_in(node_netns(ctx_, spec_.node), request);
    if (!response.answered()) return failed(fmt::format("{}: {}", what, response.error));
    return judge_http_answer(spec_, what, response.status, response.body);
  });
}

}  // namespace chaosbench::harness::probes
