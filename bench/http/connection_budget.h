// What all connections of one HttpServerCore may hold together: how many are open, how
// many refusals are in flight, and how many request-body bytes are reserved. Sessions
// reserve a body's declared size before reading it, so a flood of large stalled bodies is
// refused (503) instead of growing the process without bound.
// Threads: every member is safe from any thread (atomics, no locks, never blocks).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace chaosbench::bench::http {

class ConnectionBudget {
 public:
  // max_refusing: refusals (503 answers) in flight at once; 0 drops every connection
  // past max_connections at once.
  ConnectionBudget(std::size_t max_connections, std::uint64_t max_buffered, std::uint64_t max_refusing = 64)
      : max_connections_(max_connections), max_buffered_(max_buffered), max_refusing_(max_refusing) {}

  // One more connection, unless max_connections are open. Pair a true with close().
  bool try_open() { return take(open_, 1, max_connections_); }
  void close() { open_.fetch_sub(1); }
  // A refused connection being answered 503 (bounded so refusals cannot pile up).
  bool try_refuse() { return take(refusing_, 1, max_refusing_); }
  void refused() { refusing_.fetch_sub(1); }
  // `bytes` more of buffered body, unless that passes max_buffered. Pair with release().
  bool try_reserve(std::uint64_t bytes) { return take(buffered_, bytes, max_buffered_); }
  void release(std::uint64_t bytes) { buffered_.fetch_sub(bytes); }

  std::size_t max_connections() const { return max_connections_; }
  std::uint64_t max_buffered() const { return max_buffered_; }

 private:
  template <typename T>
  static bool take(std::atomic<T>& counter, std::uint64_t amount, std::uint64_t limit) {
    T now = counter.load();
    do {
      if (amount > limit || now > limit - amount) return false;
    } while (!counter.compare_exchange_weak(now, now + static_cast<T>(amount)));
    return true;
  }

  const std::size_t max_connections_;
  const std::uint64_t max_buffered_;
  const std::uint64_t max_refusing_;
  std::atomic<std::size_t> open_{0};
  std::atomic<std::uint64_t> refusing_{0};
  std::atomic<std::uint64_t> buffered_{0};
};

}  // namespace chaosbench::bench::http
