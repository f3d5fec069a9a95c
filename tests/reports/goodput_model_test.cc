// The goodput model's parts (reports/goodput_*.h): failure arrivals as the schedule draws
// them (deferral by dead_time, max_occurrences, the Weibull mean), one simulated job's
// accounting, the bootstrap of measured costs, the prediction interval's coverage of
// jobs simulated with another seed, determinism byte for byte, the inputs read from a
// hand-made soak results.json (tests/model/soak-results.json), refused inputs, and the
// HTML page.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "reports/goodput/failure_arrivals.h"
#include "reports/goodput/goodput_json.h"
#include "reports/goodput/goodput_model.h"
#include "reports/goodput/goodput_run_inputs.h"
#include "reports/render/html/goodput_page.h"
#include "reports/model/json_io.h"

namespace goodput_model_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using Process = GoodputInputs::Process;

namespace {

RunResult soak_fixture() {
  return read_results_file(std::string(CHAOSBENCH_SOURCE_DIR) + "/tests/model/soak-results.json");
}

// A small model: the fixture's inputs, a short grid, a small Monte Carlo.
GoodputModel small_model(std::uint64_t seed) {
  GoodputModel m;
  m.seed = seed;
  m.trials = 300;
  m.steady_failures = 5000;
  return m;
}

// One job of `work` seconds in segments of `interval`, saves of `cost`, after `startup`.
SimulationSetup job_setup(double interval, double cost, double startup, double work) {
  SimulationSetup s;
  s.interval_s = interval;
  s.cost_s = cost;
  s.startup_s = startup;
  s.work_s = work;
  return s;
}

GoodputInputs fixture_inputs() {
  auto in = assumed_goodput_inputs();
  read_run_inputs(soak_fixture(), in);
  derive_checkpoint_interval(in);
  in.nodes = {1, 16, 1024, 100000};
  return in;
}

}  // namespace

TEST_CASE("goodput arrivals: deferred by dead_time as the schedule does, at most max_occurrences", "[goodput]") {
  FailureArrivals::Model raw{Process::kPoisson, 10, 1, 5, 0};
  FailureArrivals::Model deferred = raw;
  deferred.dead_time_s = 8;
  deferred.max_occurrences = 500;
  FailureArrivals a(raw, 42), b(deferred, 42);
  double applied = -std::numeric_limits<double>::infinity();
  int moved = 0;
  for (int i = 0; i < 500; ++i) {
    const double arrival = a.next(), got = b.next();
    const double want = std::max(arrival, applied + 8);
    CHECK(got == want);
    moved += got != arrival;
    applied = got;
    if (i == 0) CHECK(arrival > 5);  // the first gap counts from the offset
  }
  CHECK(moved > 50);  // with MTBF 10 s and 8 s dead time many arrivals wait
  CHECK(std::isinf(b.next()));
}

TEST_CASE("goodput arrivals: a fault's probability thins them, and unfired ones count to the maximum",
          "[goodput]") {
  FailureArrivals::Model m{Process::kPoisson, 10, 1, 0, 0};
  m.probability = 0.25;
  FailureArrivals a(m, 3);
  double last = 0;
  int n = 0;
  for (double t = a.next(); std::isfinite(t) && n < 20000; t = a.next(), ++n) last = t;
  CHECK(last / n == Approx(40).epsilon(0.03));  // mean gap mtbf / p
  m.max_occurrences = 400;
  FailureArrivals capped(m, 3);
  int fired = 0;
  while (std::isfinite(capped.next())) ++fired;
  CHECK(fired == Approx(100).margin(30));  // about 400 x 0.25 fire
}

TEST_CASE("goodput arrivals: the Weibull process has the mean asked for", "[goodput]") {
  for (double shape : {0.7, 1.0, 2.0}) {
    FailureArrivals a(FailureArrivals::Model::with_mean(Process::kWeibull, 100, shape), 9);
    double last = 0, sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      const double t = a.next();
      sum += t - last;
      last = t;
    }
    INFO("shape " << shape);
    CHECK(sum / n == Approx(100).epsilon(0.01));
  }
  CHECK(weibull_mean(30, 1) == Approx(30));
  CHECK(weibull_mean(30, 0.5) == Approx(60));  // Γ(3) = 2
}

TEST_CASE("goodput simulation: where one job's wall time goes", "[goodput]") {
  SimulationSetup s = job_setup(100, 5, 20, 1000);
  s.fixed_cost = {1, 2, 3, 0};
  SECTION("no failure: the startup, the work and one save per full segment but the last") {
    s.arrivals = FailureArrivals::Model::with_mean(Process::kPoisson, 1e15, 1);
    const auto job = simulate_job(s, 1);
    CHECK(job.failures == 0);
    CHECK(job.saves_s == Approx(9 * 5));
    CHECK(job.wall_s == Approx(20 + 1000 + 45));
    CHECK(job.goodput() == Approx(1000.0 / 1065));
    CHECK(job.ettr() == Approx(1000.0 / 1045));  // as resilience/ettr: from the end of the startup
  }
  SECTION("failures: the parts add up to the wall time") {
    for (auto mode : {GoodputInputs::LostWork::kCheckpoint, GoodputInputs::LostWork::kMemory}) {
      s.lost_work = mode;
      s.fixed_cost.recompute_s = 7;
      s.arrivals = FailureArrivals::Model::with_mean(Process::kPoisson, 150, 1);
      const auto job = simulate_job(s, 5);
      CHECK(job.failures > 3);
      CHECK(job.work_s == 1000);
      CHECK(job.wall_s == Approx(job.startup_s + job.work_s + job.downtime_s + job.lost_s + job.saves_s));
      CHECK(job.startup_s == Approx(20));
    }
  }
}

TEST_CASE("goodput simulation: the bootstrap draws each measured failure equally", "[goodput]") {
  SimulationSetup s;
  s.interval_s = 50;
  s.cost_s = 1;
  s.arrivals = FailureArrivals::Model::with_mean(Process::kPoisson, 1000, 1);
  s.fixed_cost = {0, 20, 0, 0};
  const auto fixed = steady_state(s, 20000, 3);
  SECTION("identical failures give the fixed costs' result exactly") {
    s.bootstrap.assign(3, GoodputInputs::FailureCost{0, 20, 0, 0});
    const auto same = steady_state(s, 20000, 3);
    CHECK(same.goodput == fixed.goodput);
  }
  SECTION("three downtimes: the mean downtime per failure is theirs") {
    s.bootstrap = {{0, 10, 0, 0}, {0, 20, 0, 0}, {0, 60, 0, 0}};
    s.arrivals.scale_s = 1e6;  // rare failures: few interrupt a downtime
    SimulationSetup t = s;
    t.max_failures = 30001;
    t.work_s = std::numeric_limits<double>::infinity();
    const auto job = simulate_job(t, 8);
    CHECK(job.downtime_s / static_cast<double>(job.failures) == Approx(30).epsilon(0.02));
  }
}

TEST_CASE("goodput prediction interval: covers 95% of jobs simulated with another seed", "[goodput]") {
  SimulationSetup s = job_setup(5, 0.2, 4, 600);
  s.bootstrap = {{0.4, 2.6, 0.3, 0}, {0.5, 2.4, 0.25, 0}, {0.6, 2.5, 0.35, 0}, {0.5, 2.7, 0.3, 0}};
  s.arrivals = {Process::kPoisson, 30, 1, 0, 3, 1000};
  const auto p = predict_job(s, 2000, 11);
  CHECK(p.low < p.median);
  CHECK(p.median < p.high);
  const auto check = predict_job(s, 4000, 12345);
  int inside = 0;
  for (double g : check.goodputs) inside += g >= p.low && g <= p.high;
  const double coverage = static_cast<double>(inside) / static_cast<double>(check.goodputs.size());
  WARN("coverage of the 95% prediction interval over 4000 other jobs: " << coverage);
  CHECK(coverage == Approx(0.95).margin(0.015));
}

TEST_CASE("goodput model: the same seed gives the same report byte for byte", "[goodput]") {
  const auto in = fixture_inputs();
  const auto a = goodput_json(small_model(5).run(in)).dump(2);
  const auto b = goodput_json(small_model(5).run(in)).dump(2);
  CHECK(a == b);
  CHECK(a != goodput_json(small_model(6).run(in)).dump(2));
  CHECK(html::goodput_page_html(small_model(5).run(in)) == html::goodput_page_html(small_model(5).run(in)));
}

TEST_CASE("goodput inputs: read from a soak's results.json", "[goodput]") {
  const auto in = fixture_inputs();
  using P = GoodputInputs::Provenance;
  CHECK(in.step_time_s.value == Approx(0.1));
  CHECK(in.step_time_s.provenance == P::kMeasured);
  CHECK(in.checkpoint_interval_s.value == Approx(5));  // every 50 steps of 100 ms
  CHECK(in.checkpoint_interval_s.provenance == P::kScenario);
  CHECK(in.checkpoint_cost_s.value == Approx(0.2));
  CHECK(in.measured_failures.size() == 4);
  CHECK(in.detect_s.value == Approx(0.5));
  CHECK(in.restart_s.value == Approx(2.55));
  CHECK(in.startup_s.value == Approx(4));
  CHECK(in.lost_work == GoodputInputs::LostWork::kCheckpoint);
  CHECK(use_bootstrap(in));
  REQUIRE(in.run_failures);
  CHECK(in.run_failures->fault == "kill");
  CHECK(in.run_failures->mtbf_s == 30);
  CHECK(in.run_failures->dead_time_s == 3);
  CHECK(in.run_failures->max_occurrences == 100);
  CHECK(in.run_nodes == 4);
  CHECK(in.run_steps == 600);
  const auto report = small_model(1).run(in);
  REQUIRE(report.run);
  CHECK(report.run->work_s == Approx(60));
  CHECK(report.rows.size() == 5);  // the grid and the run's N = 4
  // A given cost ends the bootstrap.
  auto given = in;
  given.detect_s.provenance = P::kGiven;
  CHECK_FALSE(use_bootstrap(given));
}

TEST_CASE("goodput inputs: an elastic soak's rejoin joins the downtime, memory mode", "[goodput]") {
  auto run = soak_fixture();
  set_scenario(run, R"({"cluster": {"nodes": 4}, "workload": {"kind": "train", "steps": 600,
      "checkpoint": {"every_steps": 50}, "recovery": {"mode": "elastic"}},
      "faults": [{"name": "kill", "type": "node.kill", "duration": "8s", "probability": 0.5,
                  "arrivals": {"process": "weibull", "scale": "40s", "shape": 0.7}}]})");
  for (int k = 1; k <= 4; ++k) {
    MetricRecord r{"resilience/time_lost", "s", chaosbench::common::Better::kLower, {}, 1.0 + k, std::nullopt};
    r.labels = {{"phase", std::string("overall")}, {"fault", std::string("kill")},
                {"occurrence", std::int64_t{k}}, {"part", std::string("rejoin")}};
    run.metrics.push_back(r);
  }
  auto in = assumed_goodput_inputs();
  read_run_inputs(run, in);
  CHECK(in.lost_work == GoodputInputs::LostWork::kMemory);
  CHECK(in.rejoin_s.value == Approx(3.5));  // the median of 2, 3, 4, 5
  CHECK(in.downtime_s() == Approx(0.5 + 2.55 + 0.3 + 3.5));
  CHECK(in.measured_failures.at(0).downtime_s() == Approx(0.4 + 2.6 + 0.3 + 2));
  REQUIRE(in.run_failures);
  CHECK(in.run_failures->process == Process::kWeibull);
  CHECK(in.run_failures->probability == 0.5);
  CHECK(in.run_failures->dead_time_s == 8);
  CHECK(in.run_failures->mean_s() == Approx(2 * weibull_mean(40, 0.7)));
  CHECK(use_bootstrap(in));
}

TEST_CASE("goodput inputs: refused with a reason", "[goodput]") {
  auto run = soak_fixture();
  auto in = assumed_goodput_inputs();
  SECTION("no training job") {
    set_scenario(run, R"({"cluster": {"nodes": 2}, "workload": {"kind": "serve"}})");
    CHECK_THROWS_WITH(read_run_inputs(run, in), Catch::Contains("not train"));
  }
  SECTION("a job that cannot recover") {
    set_scenario(run, R"({"cluster": {"nodes": 2}, "workload": {"kind": "train", "recovery": {"mode": "none"}}})");
    read_run_inputs(run, in);
    CHECK_THROWS_WITH(validate(in), Catch::Contains("recovery.mode is none"));
  }
  SECTION("values out of range") {
    auto bad = in;
    bad.node_mtbf_s.value = 0;
    CHECK_THROWS_WITH(validate(bad), Catch::Contains("MTBF must be above zero"));
    bad = in;
    bad.checkpoint_cost_s.value = -1;
    CHECK_THROWS_WITH(validate(bad), Catch::Contains("must not be negative"));
    bad = in;
    bad.nodes = {0};
    CHECK_THROWS_WITH(validate(bad), Catch::Contains("1..1,000,000"));
    bad = in;
    bad.nodes = {2'000'000};
    CHECK_THROWS(GoodputModel{}.run(bad));
  }
}

TEST_CASE("goodput page: self-contained, with both charts and the optima marked", "[goodput]") {
  const auto html = html::goodput_page_html(small_model(1).run(fixture_inputs()));
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("Goodput against the checkpoint interval") != std::string::npos);
  CHECK(html.find(">Young<") != std::string::npos);
  CHECK(html.find(">MC optimum<") != std::string::npos);
  CHECK(html.find("prediction interval") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}

}  // namespace goodput_model_test
