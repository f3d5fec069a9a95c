#include "harness/probes/probe_support.h"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "common/kernel/netns.h"
#include "harness/scenario/placeholders.h"

namespace chaosbench::harness::probes {

std::string format_number(double value) {
  if (std::isnan(value)) return "NaN";
  return fmt::format("{:.6g}", value);
}

std::string bound_violation(double value, const ProbeSpec& spec) {
  if (std::isnan(value) && (spec.min || spec.max)) return "is NaN, which no bound admits";
  if (spec.min && value < *spec.min) return "< min " + format_number(*spec.min);
  if (spec.max && value > *spec.max) return "> max " + format_number(*spec.max);
  return "";
}

std::string printable_excerpt(std::string_view text, std::size_t max) {
  std::string out;
  if (text.size() > max) {
    std::size_t cut = max > 3 ? max - 3 : 0;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not mid-character
    out = std::string(text.substr(0, cut)) + "...";
  } else {
    out = std::string(text);
  }
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::string expand_node_addresses(std::string_view text, const ProbeContext& ctx) {
  return harness::expand_node_addresses(text, ctx.address);
}

int node_netns(const ProbeContext& ctx, int node) {
  return node >= 0 && ctx.netns_fd ? ctx.netns_fd(node) : -1;
}

http::Response fetch_in(int netns_fd, const http::Request& request) {
  if (netns_fd < 0) return http::fetch(request);
  http::Response response;
  common::in_netns(netns_fd, [&] { response = http::fetch(request); });
  return response;
}

ProbeOutcome guarded(const std::function<ProbeOutcome()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return failed(std::string("could not evaluate: ") + e.what());
  } catch (...) {
    return failed("could not evaluate: an unknown error");
  }
}

}  // namespace chaosbench::harness::probes
