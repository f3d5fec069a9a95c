#include "net_probe.h"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/kernel/netns.h"

namespace chaosbench::test {

using chaosbench::common::run_in_netns;

PingResult parse_ping(const std::string& output) {
  PingResult r;
  r.output = output;
  auto at = output.find("packets transmitted");
  if (at != std::string::npos) {
    auto line_start = output.rfind('\n', at);
    std::sscanf(output.c_str() + (line_start == std::string::npos ? 0 : line_start + 1), "%d packets transmitted, %d",
                &r.sent, &r.received);
  }
  auto rtt = output.find("rtt min/avg/max/mdev = ");
  double mn = 0, avg = 0, mx = 0;
  if (rtt != std::string::npos &&
      std::sscanf(output.c_str() + rtt, "rtt min/avg/max/mdev = %lf/%lf/%lf", &mn, &avg, &mx) == 3) {
    r.avg_ms = avg;
    r.max_ms = mx;
  }
  return r;
}

PingResult ping(int netns_fd, const std::string& address, int count, double interval_s, bool user_to_user) {
  const auto limit = std::chrono::milliseconds(static_cast<int>((count * interval_s + 5) * 1000));
  std::vector<std::string> argv{"ping", "-n", "-q", "-c", std::to_string(count), "-i", fmt::format("{}", interval_s),
                                "-W", "1"};
  if (user_to_user) argv.push_back("-U");
  argv.push_back(address);
  auto out = chaosbench::common::run_in_netns(netns_fd, argv, limit);
  return parse_ping(out.out + out.err);
}

double iperf3_mbit(int client_fd, int server_fd, const std::string& server_address, int seconds, std::string* error) {
  static int port = 5301;
  const std::string p = std::to_string(port++);
  auto server = std::async(std::launch::async, [&] {
    return chaosbench::common::run_in_netns(server_fd, {"iperf3", "-s", "-1", "-B", server_address, "-p", p}, std::chrono::seconds(seconds + 20));
  });
  // Wait until it listens, looking rather than connecting: a probing connection would be
  // the one test the server serves.
  for (int i = 0; i < 250; ++i) {
    if (!chaosbench::common::run_in_netns(server_fd, {"ss", "-Hltn", "sport", "=", ":" + p}, std::chrono::seconds(2)).out.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto out = chaosbench::common::run_in_netns(client_fd, {"iperf3", "-c", server_address, "-p", p, "-t", std::to_string(seconds), "-J"},
                          std::chrono::seconds(seconds + 15));
  server.wait();
  try {
    auto j = nlohmann::json::parse(out.out);
    if (j.contains("error")) {
      if (error) *error = j["error"].get<std::string>();
      return -1;
    }
    return j["end"]["sum_received"]["bits_per_second"].get<double>() / 1e6;
  } catch (const std::exception& e) {
    if (error) *error = fmt::format("iperf3 output unreadable ({}): {}", e.what(), out.out + out.err);
    return -1;
  }
}

}  // namespace chaosbench::test
