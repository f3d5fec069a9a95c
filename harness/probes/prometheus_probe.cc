#include "harness/probes/prometheus_probe.h"

#include <cstdlib>
#include <fmt/format.h>

#include "common/json/json_limits.h"
#include "harness/probes/probe_support.h"

namespace chaosbench::harness::probes {
namespace {

using nlohmann::json;

std::string text_of(const json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) return "";
  return printable_excerpt(it->get_ref<const std::string&>(), 300);
}

// A sample's value, [unix_time, "text"]; the text is Go's float formatting ("0.41",
// "1e+06", "NaN", "+Inf", "-Inf"), all of which strtod reads.
std::optional<double> sample_value(const json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[1].is_string()) return std::nullopt;
  const std::string& text = pair[1].get_ref<const std::string&>();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// {__name__="up", job="prometheus"} for evidence; empty for none.
std::string series_labels(const json& metric) {
  if (!metric.is_object() || metric.empty()) return "";
  std::string out;
  for (const auto& [k, v] : metric.items())
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, v.is_string() ? v.get<std::string>() : v.dump());
  return "{" + printable_excerpt(out, 200) + "}";
}

}  // namespace

std::string instant_query_url(std::string_view base, std::string_view query) {
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  std::string out = std::string(base) + "/api/v1/query?query=";
  for (unsigned char c : query) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved) out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

ProbeOutcome judge_prometheus_answer(const ProbeSpec& spec, const std::string& what, int status, const std::string& body) {
  std::string error;
  const json doc = common::parse_json_bounded(body, &error);
  if (!doc.is_object() || !doc.contains("status"))
    return failed(fmt::format("{}: status {}, not a Prometheus API answer ({})", what, status,
                              doc.is_discarded() ? error : "no \"status\""));
  if (text_of(doc, "status") != "success")
    return failed(fmt::format("{}: the query failed ({}): {}", what, text_of(doc, "errorType"), text_of(doc, "error")));
  const json* data = doc.contains("data") && doc["data"].is_object() ? &doc["data"] : nullptr;
  const std::string type = data ? text_of(*data, "resultType") : "";
  const json* result = data && data->contains("result") ? &(*data)["result"] : nullptr;
  if (!result) return failed(fmt::format("{}: the answer has no data.result", what));
  std::optional<double> value;
  std::string series;
  std::size_t samples = 1;
  if (type == "scalar") {
    value = sample_value(*result);
  } else if (type == "vector") {
    if (!result->is_array() || result->empty())
      return failed(fmt::format("{}: the query returned no samples ({})", what, spec.query));
    samples = result->size();
    const json& first = (*result)[0];
    if (first.is_object() && first.contains("value")) value = sample_value(first["value"]);
    if (first.is_object() && first.contains("metric")) series = series_labels(first["metric"]);
  } else {
    return failed(fmt::format("{}: the answer is a {}; an instant query of a vector or a scalar is judged", what,
                              type.empty() ? "result without a type" : type));
  }
  if (!value) return failed(fmt::format("{}: the first sample has no readable value", what));
  const std::string violation = bound_violation(*value, spec);
  std::string evidence = fmt::format("{} = {}{}{}", spec.query, format_number(*value), series,
                                     samples > 1 ? fmt::format(" (first of {} samples)", samples) : "");
  if (!violation.empty()) evidence += " " + violation;
  return ProbeOutcome{violation.empty(), value, std::move(evidence)};
}

PrometheusProbe::PrometheusProbe(ProbeSpec spec, ProbeContext ctx) : spec_(std::move(spec)), ctx_(std::move(ctx)) {}

ProbeOutcome PrometheusProbe::evaluate(double /*now_wall*/) {
  return guarded([&] {
    const std::string base = expand_node_addresses(spec_.url, ctx_);
    http::Request request;
    request.url = instant_query_url(base, spec_.query);
    request.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(spec_.timeout.value);
    request.headers.emplace_back("Accept", "application/json");
    const std::string what = "GET " + base + "/api/v1/query";
    const http::Response response = fetch_in(node_netns(ctx_, spec_.node), request);
    if (!response.answered()) return failed(fmt::format("{}: {}", what, response.error));
    return judge_prometheus_answer(spec_, what, response.status, response.body);
  });
}

}  // namespace chaosbench::harness::probes
