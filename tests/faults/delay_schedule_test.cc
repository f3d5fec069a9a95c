// The delay line's pure half (DelaySchedule): jitter bounds and spread, release order,
// loss rate, the bit flip, the normal quantile. No root, no clock: arrivals are made up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "faults/network/delay_schedule.h"

namespace delay_schedule_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::faults::DelayLineSettings;
using chaosbench::faults::DelaySchedule;
using chaosbench::faults::PacketFate;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("delay schedule: uniform jitter stays within delay +/- jitter and centres on the delay", "[network]") {
  DelayLineSettings s;
  s.delay = 10ms;
  s.jitter = 2ms;
  DelaySchedule schedule(s);
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    auto d = schedule.sample_delay();
    REQUIRE(d >= 8ms);
    REQUIRE(d <= 12ms);
    sum += std::chrono::duration<double, std::milli>(d).count();
  }
  CHECK(sum / n == Approx(10.0).margin(0.05));
}

TEST_CASE("delay schedule: normal jitter has the asked standard deviation", "[network]") {
  DelayLineSettings s;
  s.delay = 50ms;
  s.jitter = 5ms;
  s.distribution = DelayLineSettings::Distribution::kNormal;
  DelaySchedule schedule(s);
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) v.push_back(std::chrono::duration<double, std::milli>(schedule.sample_delay()).count());
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  CHECK(mean == Approx(50.0).margin(0.2));
  CHECK(std::sqrt(var) == Approx(5.0).epsilon(0.03));
}

TEST_CASE("delay schedule: releases never go backwards even when jitter exceeds the packet spacing", "[network]") {
  DelayLineSettings s;
  s.delay = 5ms;
  s.jitter = 4ms;  // packets 100 us apart: jitter alone would reorder most of them
  DelaySchedule schedule(s);
  Clock::time_point t{}, last{};
  for (int i = 0; i < 10000; ++i) {
    t += 100us;
    PacketFate fate = schedule.next(t);
    REQUIRE(fate.kind == PacketFate::Kind::kHold);
    REQUIRE(fate.release >= last);
    REQUIRE(fate.release >= t);
    last = fate.release;
  }
}

TEST_CASE("delay schedule: loss 10% drops 10% of packets, reorder takes its share of the rest", "[network]") {
  DelayLineSettings s;
  s.delay = 1ms;
  s.loss = 0.1;
  s.reorder = 0.2;
  s.seed = 7;
  DelaySchedule schedule(s);
  int dropped = 0, reordered = 0;
  const int n = 100000;
  Clock::time_point t{};
  for (int i = 0; i < n; ++i) {
    auto fate = schedule.next(t += 10us);
    dropped += fate.kind == PacketFate::Kind::kDrop;
    reordered += fate.kind == PacketFate::Kind::kReorder;
  }
  // Binomial standard deviations: ~95 drops and ~120 reorders; 5 of them as margin.
  CHECK(std::abs(dropped - 10000) < 500);
  CHECK(std::abs(reordered - 18000) < 600);
}

TEST_CASE("delay schedule: the same seed gives the same fates", "[network]") {
  DelayLineSettings s;
  s.delay = 1ms;
  s.jitter = 1ms;
  s.loss = 0.3;
  s.seed = 42;
  DelaySchedule a(s), b(s);
  Clock::time_point t{};
  for (int i = 0; i < 1000; ++i) {
    t += 50us;
    auto fa = a.next(t), fb = b.next(t);
    REQUIRE(fa.kind == fb.kind);
    REQUIRE(fa.release == fb.release);
  }
}

TEST_CASE("delay schedule: the bit flip changes exactly one bit after the IP header", "[network]") {
  DelaySchedule schedule(DelayLineSettings{});
  for (int round = 0; round < 200; ++round) {
    std::vector<unsigned char> packet(60, 0xA5);
    packet[0] = 0x46;  // IPv4 with a 24-byte header (one option word)
    auto original = packet;
    REQUIRE(schedule.flip_bit(packet.data(), packet.size()));
    int bits = 0;
    for (std::size_t i = 0; i < packet.size(); ++i) {
      if (packet[i] != original[i]) {
        REQUIRE(i >= 24);
        bits += __builtin_popcount(packet[i] ^ original[i]);
      }
    }
    REQUIRE(bits == 1);
  }
  std::vector<unsigned char> v6(48, 0);
  v6[0] = 0x60;
  REQUIRE(schedule.flip_bit(v6.data(), v6.size()));
  REQUIRE(std::all_of(v6.begin() + 1, v6.begin() + 40, [](unsigned char c) { return c == 0; }));
  std::vector<unsigned char> header_only(20, 0);
  header_only[0] = 0x45;
  CHECK_FALSE(schedule.flip_bit(header_only.data(), header_only.size()));
  std::vector<unsigned char> not_ip(40, 0x12);
  CHECK_FALSE(schedule.flip_bit(not_ip.data(), not_ip.size()));
}

TEST_CASE("delay schedule: inverse_normal_cdf inverts the normal CDF", "[network]") {
  for (double p : {1e-6, 0.001, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.999, 1 - 1e-6}) {
    const double x = chaosbench::faults::inverse_normal_cdf(p);
    CHECK(0.5 * std::erfc(-x / std::sqrt(2.0)) == Approx(p).epsilon(1e-6));
  }
  CHECK(chaosbench::faults::inverse_normal_cdf(0.975) == Approx(1.959964).epsilon(1e-6));
}

TEST_CASE("delay schedule: bad settings are refused", "[network]") {
  DelayLineSettings s;
  s.loss = 1.5;
  CHECK_THROWS_AS(DelaySchedule(s), std::invalid_argument);
  s = {};
  s.delay = -1ms;
  CHECK_THROWS_AS(DelaySchedule(s), std::invalid_argument);
  s = {};
  s.delay_correlation = -0.1;
  CHECK_THROWS_AS(DelaySchedule(s), std::invalid_argument);
}

}  // namespace delay_schedule_test
