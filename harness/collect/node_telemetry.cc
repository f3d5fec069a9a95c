#include "harness/collect/node_telemetry.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "bench/protocol/record.h"

namespace chaosbench::harness {
namespace {

// A small kernel file's text; "" when it cannot be read (a thread that just ended).
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

bool NodeTelemetry::parse_schedstat(const std::string& text, ThreadTimes* out) {
  std::istringstream in(text);
  std::uint64_t cpu = 0, wait = 0;
  if (!(in >> cpu >> wait)) return false;
  *out = {cpu, wait};
  return true;
}

bool NodeTelemetry::parse_throttled(const std::string& text, std::uint64_t* ns) {
  std::istringstream in(text);
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "throttled_time") return *ns = value, true;
    if (key == "throttled_usec") return *ns = value * 1000, true;
  }
  return false;
}

NodeTelemetry::NodeTelemetry(std::vector<NodeTelemetrySource> nodes, common::Duration window, Sink sink, std::string host)
    : nodes_(std::move(nodes)), state_(nodes_.size()), window_(window), sink_(std::move(sink)), host_(std::move(host)) {}

NodeTelemetry::~NodeTelemetry() { stop(); }

// The first sample only sets the counters (it emits nothing), so it runs here; each tick
// then emits the deltas over the time since the one before.
void NodeTelemetry::start() {
  last_ = std::chrono::steady_clock::now();
  sample(bench::wall_time_now(), 0, true);
  thread_.start(window_.value, [this] {
    const auto now = std::chrono::steady_clock::now();
    const double window_s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    sample(bench::wall_time_now(), window_s, false);
  });
}

void NodeTelemetry::stop() { thread_.stop(); }

// Each node's deltas since the last sample; a thread new since then counts from its
// start, one gone since then is lost for its last window (the kernel keeps no tally).
void NodeTelemetry::sample(double now, double window_s, bool first) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto& src = nodes_[i];
    auto& st = state_[i];
    std::map<int, ThreadTimes> threads;
    std::uint64_t cpu = 0, wait = 0;
    std::istringstream tids(slurp(src.threads_file));
    for (int tid = 0; tids >> tid;) {
      ThreadTimes t;
      if (!parse_schedstat(slurp("/proc/" + std::to_string(tid) + "/schedstat"), &t)) continue;
      threads[tid] = t;
      auto was = st.threads.find(tid);
      const ThreadTimes before = was == st.threads.end() ? ThreadTimes{} : was->second;
      cpu += t.cpu_ns >= before.cpu_ns ? t.cpu_ns - before.cpu_ns : 0;
      wait += t.wait_ns >= before.wait_ns ? t.wait_ns - before.wait_ns : 0;
    }
    st.threads = std::move(threads);
    std::uint64_t throttled = 0;
    const bool have_throttled = !src.cpu_stat.empty() && parse_throttled(slurp(src.cpu_stat), &throttled);
    const bool had_throttled = st.have_throttled;
    const std::uint64_t throttled_before = st.throttled_ns;
    st.have_throttled = have_throttled;
    st.throttled_ns = throttled;
    if (first || window_s <= 0) continue;
    const bench::Labels labels{{"node", src.name}};
    const double ns = window_s * 1e9;
    sink_({-1, now, "node/cpu_usage", static_cast<double>(cpu) / ns, "CPUs", labels});
    sink_({-1, now, "node/cpu_wait", static_cast<double>(wait) / ns, "threads", labels});
    if (have_throttled && had_throttled && throttled >= throttled_before)
      sink_({-1, now, "node/cpu_throttled", 100.0 * static_cast<double>(throttled - throttled_before) / ns, "%", labels});
    if (!src.memory_usage.empty()) {
      std::istringstream m(slurp(src.memory_usage));
      double bytes = 0;
      if (m >> bytes) sink_({-1, now, "node/memory_used", bytes, "bytes", labels});
    }
  }
  sample_steal(now, first);
}

void NodeTelemetry::sample_steal(double now, bool first) {
  std::istringstream in(slurp("/proc/stat"));
  std::string cpu;
  in >> cpu;
  if (cpu != "cpu") return;
  std::uint64_t v = 0, total = 0, steal = 0;
  for (int field = 0; field < 8 && in >> v; ++field) {  // guest time is in user already
    total += v;
    if (field == 7) steal = v;
  }
  const std::uint64_t dt = total - total_, ds = steal - steal_;
  const bool had = total_ > 0;
  total_ = total;
  steal_ = steal;
  if (!first && had && dt > 0 && ds <= dt) sink_({-1, now, "host/cpu_steal", 100.0 * static_cast<double>(ds) / static_cast<double>(dt), "%",
                                                        host_.empty() ? bench::Labels{} : bench::Labels{{"host", host_}}});
}

}  // namespace chaosbench::harness
