#include "bench/load/load_config.h"

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
