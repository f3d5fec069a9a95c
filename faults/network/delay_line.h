// A user-space delay line for one network namespace, fed by the iptables NFQUEUE target
// (libnetfilter-queue): the backend for delay, jitter, loss, corruption and reordering on
// kernels without sch_netem. One DelayLine serves one queue number in one namespace; the
// iptables rule that steers packets to it is added by its owner after construction and
// removed before destruction (rules use --queue-bypass, so a queue nobody serves passes
// traffic instead of dropping it).
//
// It is meant to sit on the receiving side of a link (INPUT hook of the receiving node):
// packets held on the sender's OUTPUT hook count against the sending socket (TCP small
// queues) and throttle TCP far below what a real slow link does.
//
// Threads: the constructor starts one thread, which enters the namespace and serves the
// queue until the destructor stops it. stats() may be called from any thread.
//
// Side effect: while a DelayLine lives it keeps the kernel's receive timestamps on (a
// host-wide switch that any ping also flips), so delays count from the packet's arrival
// in the namespace rather than from when the thread read it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace chaosbench::faults {

struct DelayLineSettings {
  enum class Distribution { kUniform, kNormal };
  std::chrono::nanoseconds delay{0};
  std::chrono::nanoseconds jitter{0};        // uniform: +/- jitter; normal: standard deviation
  Distribution distribution = Distribution::kUniform;
  double delay_correlation = 0;              // 0..1, as netem's: next = c*last + (1-c)*random
  double loss = 0;                           // probability 0..1 that a packet is dropped
  double loss_correlation = 0;               // 0..1
  double corrupt = 0;                        // probability 0..1: one bit of the packet flipped;
                                             // the receiver's checksum then discards it
  double reorder = 0;                        // probability 0..1: released at once, ahead of
                                             // packets still held
  // Packets are released in arrival order (jitter never reorders them unless `reorder`
  // asks): release = max(previous release, arrival + delay + jitter sample).
  std::uint32_t queue_limit = 100000;        // packets held at most; beyond, dropped (counted)
  std::uint64_t seed = 1;
};

struct DelayLineStats {
  std::uint64_t packets = 0;       // received from the queue
  std::uint64_t released = 0;      // accepted (after their delay)
  std::uint64_t dropped = 0;       // loss
  std::uint64_t corrupted = 0;
  std::uint64_t reordered = 0;
  std::uint64_t overflows = 0;     // dropped because queue_limit was reached
  // Time packets were held, as measured by the delay line itself (arrival to verdict):
  // the mean and the mean of |held - intended| for delayed packets, in microseconds.
  double held_mean_us = 0;
  double held_error_mean_us = 0;
  // Why the thread stopped serving before the destructor asked it to (a netlink error);
  // empty while it serves. Once stopped, held packets were accepted and the queue
  // unbound, so the rule's --queue-bypass passes traffic undelayed.
  std::string error;
};

class DelayLine {
 public:
  // Binds NFQUEUE `queue_num` in the namespace of `netns_fd` and starts serving it. Throws
  // std::runtime_error (with the reason) when nfnetlink_queue is unavailable or the queue
  // number is taken, std::invalid_argument for settings out of range; no thread is left
  // behind either way. Returns once the queue is bound, so a rule added afterwards never
  // finds it unserved.
  DelayLine(int netns_fd, std::uint16_t queue_num, const DelayLineSettings& settings);
  // Stops the thread; packets still held are released (accepted) at once. Blocks until done.
  ~DelayLine();
  DelayLine(const DelayLine&) = delete;
  DelayLine& operator=(const DelayLine&) = delete;

  DelayLineStats stats() const;
  std::uint16_t queue_num() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::faults
