// The diagnosis engine on synthetic series (reports/diagnosis/diagnoser.h): what it names for each
// class of fault, and that it names nothing when nothing stands out. The real runs are
// perf/harness/blind_trials.sh's.
#include <catch2/catch.hpp>

#include <random>

#include "reports/diagnosis/diagnoser.h"
#include "reports/diagnosis/diagnosis_output.h"
#include "harness/collect/mesh_window.h"

namespace diagnoser_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using chaosbench::harness::MeshWindow;

namespace {

// A 4-node run of `seconds`: the mesh (1 sample per pair per second), each node's CPU
// wait and use, each rank's compute time (10 steps a second), all with noise; `effect`
// changes a value from `from_s` on.
struct Synthetic {
  int nodes = 4;
  double seconds = 60;
  double from_s = 1e9;
  std::function<double(const std::string& name, const Labels& l, double v)> effect = [](auto&, auto&, double v) { return v; };

  std::vector<Series> make(unsigned seed) const {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0, 1);
    std::vector<Series> out;
    auto series = [&](std::string name, Labels labels, double step, auto base) {
      Series s{name, "", labels, {}, {}};
      for (double t = 0.5; t < seconds; t += step) {
        double v = base();
        if (t >= from_s) v = effect(name, labels, v);
        s.t.push_back(t), s.v.push_back(v);
      }
      out.push_back(std::move(s));
    };
    for (int a = 0; a < nodes; ++a)
      for (int b = 0; b < nodes; ++b) {
        if (a == b) continue;
        Labels l{{"src", "node" + std::to_string(a)}, {"dst", "node" + std::to_string(b)}, {"rank", std::int64_t{-1}}};
        series("net/pair_rtt", l, 1, [&] { return 0.06 + 0.01 * std::fabs(noise(rng)); });
        series("net/pair_loss", l, 1, [&] { return 0.0; });
      }
    for (int n = 0; n < nodes; ++n) {
      Labels l{{"node", "node" + std::to_string(n)}, {"rank", std::int64_t{-1}}};
      series("node/cpu_usage", l, 1, [&] { return 0.5 + 0.05 * noise(rng); });
      series("node/cpu_wait", l, 1, [&] { return 0.5 + 0.08 * noise(rng); });
      series("train/compute_time", {{"rank", std::int64_t{n}}}, 0.1, [&] { return 80 + 6 * noise(rng); });
    }
    return out;
  }
};

Diagnosis run(const Synthetic& s, unsigned seed = 1) { return diagnose_series(s.make(seed), {}); }

bool is(const std::string& name, const Labels& l, const std::string& key, const std::string& value) {
  auto it = l.find(key);
  return it != l.end() && label_to_string(it->second) == value && !name.empty();
}

}  // namespace

TEST_CASE("diagnosis: noise alone names nothing", "[diagnosis]") {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    auto d = run(Synthetic{}, seed);
    INFO(diagnosis_text(d));
    CHECK(d.culprits.empty());
    CHECK(d.windows > 50);
  }
}

TEST_CASE("diagnosis: a delay on one link names that link, from both directions' round trips", "[diagnosis]") {
  Synthetic s;
  s.from_s = 20;
  s.effect = [](const std::string& name, const Labels& l, double v) {
    const bool link = (is(name, l, "src", "node1") && is(name, l, "dst", "node3")) ||
                      (is(name, l, "src", "node3") && is(name, l, "dst", "node1"));
    return name == "net/pair_rtt" && link ? v + 8 : v;
  };
  auto d = run(s);
  INFO(diagnosis_text(d));
  REQUIRE(d.culprits.size() == 1);
  CHECK(d.culprits[0].cls == "link");
  CHECK(d.culprits[0].component == "node1-node3");
  CHECK(d.culprits[0].first_named_s >= 20);
  CHECK(d.culprits[0].first_named_s <= 26);
  CHECK(d.culprits[0].confidence > 0.8);
  CHECK(diagnosis_json(d).find("\"component\": \"node1-node3\"") != std::string::npos);
}

TEST_CASE("diagnosis: a delay on all of one node's traffic names its NIC", "[diagnosis]") {
  Synthetic s;
  s.from_s = 15;
  s.effect = [](const std::string& name, const Labels& l, double v) {
    return name == "net/pair_rtt" && (is(name, l, "src", "node2") || is(name, l, "dst", "node2")) ? v + 4 : v;
  };
  auto d = run(s);
  INFO(diagnosis_text(d));
  REQUIRE(d.culprits.size() == 1);
  CHECK(d.culprits[0].cls == "nic");
  CHECK(d.culprits[0].component == "node2");
  CHECK(d.culprits[0].what == "slow NIC");
}

TEST_CASE("diagnosis: loss on one link names that link as lossy", "[diagnosis]") {
  Synthetic s;
  s.from_s = 25;
  s.effect = [](const std::string& name, const Labels& l, double v) {
    return name == "net/pair_loss" && is(name, l, "src", "node0") && is(name, l, "dst", "node1") ? 20.0 : v;
  };
  auto d = run(s);
  INFO(diagnosis_text(d));
  REQUIRE(d.culprits.size() == 1);
  CHECK(d.culprits[0].component == "node0-node1");
  CHECK(d.culprits[0].what == "lossy link");
}

TEST_CASE("diagnosis: a slow rank whose node waits for CPU is the node, and one whose node does not is its device", "[diagnosis]") {
  for (bool starved : {true, false}) {
    Synthetic s;
    s.from_s = 20;
    s.effect = [starved](const std::string& name, const Labels& l, double v) {
      if (name == "train/compute_time" && l.at("rank") == chaosbench::common::LabelValue{std::int64_t{1}}) return v * 3;
      if (name == "node/cpu_wait" && is(name, l, "node", "node1")) return starved ? v * 0.5 : v * 0.3;
      if (name == "node/cpu_usage" && is(name, l, "node", "node1")) return starved ? 0.1 : 0.15;
      return v;
    };
    auto d = run(s);
    INFO(diagnosis_text(d));
    REQUIRE(d.culprits.size() == 1);
    CHECK(d.culprits[0].cls == (starved ? "node" : "gpu"));
    CHECK(d.culprits[0].component == (starved ? "node1" : "rank1"));
  }
}

TEST_CASE("link mesh: a pair's loss is settled per window sent, only after the timeout", "[diagnosis]") {
  MeshWindow w;
  const std::int64_t s = 1'000'000'000;
  auto a = w.sent(0, 0);
  w.sent(s / 2, 0);
  auto c = w.sent(s + 1, 1);
  CHECK(w.answered(a, 100'000, 0).value() == 100'000);
  CHECK_FALSE(w.answered(a, 100'000, 0));            // a duplicate echo
  CHECK_FALSE(w.answered(a + 1, 2 * s, 2 * s));       // a hold longer than the round trip
  CHECK_FALSE(w.answered(a + 7, 2 * s, 0));           // a probe never sent
  CHECK(w.answered(c, s + 1 + 400'000, 100'000).value() == 300'000);  // less the reflector's hold
  CHECK(w.take_rtt_ms().value() == Approx(0.2));  // 0.1 and 0.3; the duplicate counts once
  CHECK_FALSE(w.take_rtt_ms());
  CHECK(w.settle(s / 2, s).empty());  // nothing past its timeout yet
  auto done = w.settle(s + s / 2 + 1, s);
  REQUIRE(done.size() == 1);
  CHECK(done[0].window == 0);
  CHECK(done[0].sent == 2);
  CHECK(done[0].lost == 1);
  auto rest = w.settle(0, s, /*all=*/true);
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].lost == 0);
}

}  // namespace diagnoser_test
