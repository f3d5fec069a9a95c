#include "bench/load/load_config.h"

#include <charconv>

namespace chaosbench::bench::load {

LoadConfig load_config(const LoadSettings& settings) {
  LoadConfig config;
  config.scenario = settings.scenario;
  config.qps = settings.qps;
  config.duration = settings.duration.value;
  config.connections = settings.connections;
  config.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(settings.timeout.value);
  config.window = std::chrono::duration_cast<std::chrono::milliseconds>(settings.window.value);
  config.rows = settings.rows;
  return config;
}

std::optional<std::vector<Endpoint>> parse_endpoint_list(std::string_view list, std::string& error) {
  std::vector<Endpoint> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
    if (item.empty()) continue;
    auto endpoint = parse_endpoint(item, error);
    if (!endpoint) return std::nullopt;
    out.push_back(*endpoint);
  }
  if (out.empty()) {
    error = "expected comma-separated http://host:port";
    return std::nullopt;
  }
  return out;
}

std::optional<Endpoint> parse_endpoint(std::string_view url, std::string& error) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    error = "expected http://host[:port], got \"" + std::string(url) + "\"";
    return std::nullopt;
  }
  auto rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) {
    error = "an endpoint has no path (the request path is --path), got \"" + std::string(url) + "\"";
    return std::nullopt;
  }
  Endpoint endpoint;
  const auto colon = rest.rfind(':');
  endpoint.host = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) {
    const auto port_text = rest.substr(colon + 1);
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      error = "bad port in \"" + std::string(url) + "\"";
      return std::nullopt;
    }
    endpoint.port = static_cast<std::uint16_t>(port);
  }
  if (endpoint.host.empty()) {
    error = "no host in \"" + std::string(url) + "\"";
    return std::nullopt;
  }
  return endpoint;
}

std::optional<std::string> load_config_error(const LoadConfig& config) {
  if (config.endpoints.empty()) return "no endpoints";
  if (config.scenario == LoadScenario::kServer && !(config.qps > 0)) return "--qps must be positive";
  if (config.duration <= std::chrono::nanoseconds::zero()) return "--duration must be positive";
  if (config.connections < 1 || config.connections > 4096) return "--connections must be in [1, 4096]";
  if (config.timeout <= std::chrono::milliseconds::zero()) return "--timeout-ms must be positive";
  if (config.window < std::chrono::milliseconds(100)) return "--window-ms must be at least 100";
  if (config.path.empty() && (config.rows < 1 || config.dim < 1)) return "--rows and --dim must be positive";
  if (!config.path.empty() && config.path.front() != '/') return "--path must start with /";
  if (config.body_variants < 1) return "body variants must be positive";
  return std::nullopt;
}

}  // namespace chaosbench::bench::load
