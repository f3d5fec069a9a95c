// The controller-agent clock offset estimator against offsets the test injects, over
// simulated links with asymmetric delays, queueing and outliers.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "harness/agent/clock_offset.h"

namespace clock_offset_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;

namespace {

// An agent whose clock is the controller's plus `offset`, behind a link whose one-way
// delays are a fixed minimum (different each way) plus exponential queueing, with an
// occasional long stall.
struct SimulatedAgent {
  double offset;
  double min_out = 50e-6, min_back = 150e-6;
  double queue_mean = 2e-3;
  std::mt19937_64 rng{7};

  double delay(double minimum) {
    std::exponential_distribution<double> queue(1 / queue_mean);
    std::uniform_real_distribution<double> u(0, 1);
    return minimum + queue(rng) + (u(rng) < 0.1 ? 20e-3 : 0);
  }
  ClockExchange exchange(double t0) {
    const double arrive = t0 + delay(min_out);  // controller time
    const double answer = arrive + 30e-6;       // the agent's handling
    const double back = answer + delay(min_back);
    return {t0, arrive + offset, answer + offset, back};
  }
};

}  // namespace

TEST_CASE("clock offset: an injected offset is found within 0.5 ms over a noisy, asymmetric link", "[clock]") {
  for (double injected : {37.25e-3, -1.5, 0.0, 3600.0}) {
    SimulatedAgent agent{injected};
    ClockOffsetEstimator est;
    for (int i = 0; i < 32; ++i) REQUIRE(est.add(agent.exchange(100.0 + i * 0.25)));
    auto e = est.estimate();
    REQUIRE(e);
    CHECK(std::abs(e->offset_s - injected) < 0.5e-3);
    CHECK(std::abs(e->offset_s - injected) <= e->uncertainty_s + 1e-12);  // the bound holds
    CHECK(e->uncertainty_s == Approx(e->rtt_s / 2));
    CHECK(e->samples == 32);
    CHECK(est.to_controller(200.0 + injected) == Approx(200.0).margin(0.5e-3));
  }
}

TEST_CASE("clock offset: the window follows a clock that steps during the run", "[clock]") {
  SimulatedAgent agent{0.010};
  ClockOffsetEstimator est(8);
  for (int i = 0; i < 8; ++i) est.add(agent.exchange(i * 0.1));
  CHECK(est.estimate()->offset_s == Approx(0.010).margin(0.5e-3));
  agent.offset = 0.030;  // the agent's clock was stepped by 20 ms
  for (int i = 8; i < 16; ++i) est.add(agent.exchange(i * 0.1));
  CHECK(est.estimate()->offset_s == Approx(0.030).margin(0.5e-3));
  CHECK(est.estimate()->samples == 8);
}

TEST_CASE("clock offset: impossible exchanges are refused, nothing before the first", "[clock]") {
  ClockOffsetEstimator est;
  CHECK_FALSE(est.estimate());
  CHECK(est.to_controller(12.5) == 12.5);
  CHECK_FALSE(est.add({1.0, 5.0, 4.9, 1.1}));   // the agent answered before it received
  CHECK_FALSE(est.add({1.0, 5.0, 5.5, 1.2}));   // it held the request longer than the round trip
  CHECK_FALSE(est.add({1.0, std::numeric_limits<double>::quiet_NaN(), 5.0, 1.1}));
  CHECK_FALSE(est.estimate());
  CHECK(est.add({1.0, 5.05, 5.06, 1.11}));  // rtt 0.1 s, offset 4.0
  CHECK(est.estimate()->offset_s == Approx(4.0));
  CHECK(est.estimate()->uncertainty_s == Approx(0.05));
}

}  // namespace clock_offset_test
