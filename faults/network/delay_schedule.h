// The pure half of the delay line: what happens to each packet (dropped, reordered, or
// held until when; corrupted or not) and the bit flip itself, from the settings and a
// seeded generator. No I/O and no clock reads, so its statistics are unit-tested without
// root; delay_line.cc does the netlink half.
//
// Threads: not thread-safe; the delay line's thread owns one.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>

#include "faults/network/delay_line.h"

namespace chaosbench::faults {

// netem's correlated random source (sch_netem.c get_crandom), on doubles instead of
// 32-bit integers: next = c*last + (1-c)*u with u uniform in [0,1). c = 0 is plain
// uniform; c -> 1 repeats the last value. Like netem's, correlation also narrows the
// spread of the values (their mean stays 0.5).
class CorrelatedUniform {
 public:
  explicit CorrelatedUniform(double correlation) : c_(correlation) {}
  double next(std::mt19937_64& rng);

 private:
  double c_;
  double last_ = 0.5;
  bool first_ = true;
};

// The standard normal quantile (inverse CDF) for p in (0,1): P. J. Acklam's rational
// approximation, relative error < 1.2e-9 — far below a nanosecond for any jitter asked.
double inverse_normal_cdf(double p);

struct PacketFate {
  enum class Kind { kDrop, kReorder, kHold };
  Kind kind = Kind::kHold;
  bool corrupt = false;  // flip one bit (see DelaySchedule::flip_bit) before accepting
  std::chrono::steady_clock::time_point release{};  // kHold only: when to accept it
};

class DelaySchedule {
  using Clock = std::chrono::steady_clock;

 public:
  // Throws std::invalid_argument for a negative delay or jitter, or a probability or a
  // correlation outside 0..1.
  explicit DelaySchedule(const DelayLineSettings& settings);

  // The fate of the next packet, which arrived at `arrival` (arrivals come in order).
  // Decided in netem's order: loss, then corruption, then reorder, then the delay. Held
  // packets get release = max(previous held release, arrival + delay + jitter sample),
  // never before arrival, so jitter alone never reorders.
  PacketFate next(Clock::time_point arrival);

  // Flips one random bit of an IP packet's payload (everything after the IPv4 or IPv6
  // header: the transport header and data, which the transport checksum covers, so the
  // receiver discards the packet as a checksum error). False, and nothing changed, when
  // the packet is not IP or has no payload.
  bool flip_bit(unsigned char* packet, std::size_t length);

  // The delay + jitter sample alone (no ordering), clamped at zero; exposed for tests.
  std::chrono::nanoseconds sample_delay();

 private:
  DelayLineSettings settings_;
  std::mt19937_64 rng_;
  CorrelatedUniform delay_random_;
  CorrelatedUniform loss_random_;
  Clock::time_point last_release_{};
};

}  // namespace chaosbench::faults
