// Outside tools that check a network fault's effect in the tests: ping (RTT, loss) and
// iperf3 (throughput), run inside the cluster's namespaces. Test-only helpers.
#pragma once

#include <cmath>
#include <string>

namespace chaosbench::test {

struct PingResult {
  int sent = 0;
  int received = 0;
  double avg_ms = NAN;  // NaN when no reply came back (every comparison with it fails)
  double max_ms = NAN;
  std::string output;  // ping's own, for failure messages
};

// ping's summary lines ("N packets transmitted, M received", "rtt min/avg/max/mdev = ...")
// read from its output.
PingResult parse_ping(const std::string& output);

// `count` echo requests from the namespace `netns_fd` to `address`, `interval_s` apart,
// each waiting at most 1 s for its reply. ping's RTT ends at the kernel's receive
// timestamp of the reply, taken when it reached the namespace; `user_to_user` (ping -U)
// ends it when ping read the reply, so it also counts a reply held on the pinging side's
// own INPUT hook.
PingResult ping(int netns_fd, const std::string& address, int count, double interval_s, bool user_to_user = false);

// One TCP stream from `client_fd`'s namespace to an iperf3 server started in
// `server_fd`'s namespace at `server_address`, for `seconds`; the receiver's Mbit/s, or
// -1 when iperf3 failed (its message in *error).
double iperf3_mbit(int client_fd, int server_fd, const std::string& server_address, int seconds,
                   std::string* error = nullptr);

}  // namespace chaosbench::test
