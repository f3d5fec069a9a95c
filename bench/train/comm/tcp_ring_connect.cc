// The gradient ring's connections (tcp_ring_reducer.h): each rank listens, publishes its
// address in the rendezvous store, connects to the next rank and accepts the previous
// one, which must say who it is (tcp_links.h).
#include "bench/train/comm/tcp_ring_reducer.h"

#include <unistd.h>

#include "bench/train/comm/tcp_links.h"

#include <fmt/format.h>

namespace chaosbench::bench::train {
namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace

void TcpRingReducer::connect_ring(gloo::rendezvous::Store& store, const std::string& key, const std::string& host) {
  const auto deadline = TcpClock::now() + timeout_;
  constexpr const char* kWhat = "gradient ring";
  const int listener = listen_and_publish(store, fmt::format("{}/{}", key, rank_), host, kWhat);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } close_listener{listener};
  // To the next rank: its address from the store, then who we are.
  const int next = mod(rank_ + 1, size_), prev = mod(rank_ - 1, size_);
  send_fd_ = connect_published(store, fmt::format("{}/{}", key, next), next, rank_, timeout_, deadline, kWhat);
  // From the previous rank: whoever calls must say it is that rank.
  int caller = -1;
  recv_fd_ = accept_hello(listener, timeout_, deadline, caller, kWhat);
  if (caller != prev)
    throw CollectiveError(fmt::format("gradient ring: the connection accepted is not from rank {}", prev));
}

}  // namespace chaosbench::bench::train
