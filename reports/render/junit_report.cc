#include "reports/render/junit_report.h"

#include <fmt/format.h>
#include <set>

#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

struct TestCase {
  std::string name;
  std::string outcome;  // "", "failure", "skipped", "error"
  std::string message;  // the outcome's message attribute
  std::string type;     // the outcome's type attribute
  std::string body;     // the values, as the outcome's text
};

// GitLab keeps only the first of duplicate names: the second "x" becomes "x #2".
void make_unique(std::vector<TestCase>& cases) {
  std::set<std::string> seen;
  for (auto& c : cases) {
    std::string name = c.name;
    for (int n = 2; !seen.insert(name).second; ++n) name = fmt::format("{} #{}", c.name, n);
    c.name = name;
  }
}

TestCase check_case(const CheckResult& c, const std::string& unit) {
  TestCase t;
  std::string labels = format_labels(c.labels);
  t.name = fmt::format("{}{}{} {} {:g}", c.metric, labels.empty() ? "" : " ", labels, c.op, c.threshold);
  if (c.status == CheckStatus::kPass) return t;
  t.outcome = "failure";
  t.type = "check";
  t.message = c.message.empty() ? fmt::format("{} {} {:g} failed", c.metric, c.op, c.threshold) : c.message;
  t.body = fmt::format("metric: {}\nlabels: {}\ncondition: {} {:g}\nvalue: {}\n", c.metric, labels.empty() ? "-" : labels, c.op,
                       c.threshold, c.value ? format_value(*c.value, unit) : "no record matched");
  return t;
}

TestCase gate_case(const MetricComparison& c) {
  TestCase t;
  std::string labels = format_labels(c.labels);
  t.name = fmt::format("gate: {}{}{} {}", c.name, labels.empty() ? "" : " ", labels, c.stat);
  if (c.status == GateStatus::kPass) return t;
  t.outcome = c.status == GateStatus::kWarn ? "skipped" : "failure";
  t.type = "gate";
  t.message = c.reason.empty() ? fmt::format("{} change {}", c.stat, format_change(c.change)) : c.reason;
  if (t.outcome == "skipped") return t;
  t.body = fmt::format("baseline {}: {} (n={})\ncurrent {}: {} (n={})\nchange: {}", c.stat, format_value(c.baseline, c.unit),
                       c.n_baseline, c.stat, format_value(c.current, c.unit), c.n_current, format_change(c.change));
  if (c.ci_low && c.ci_high) t.body += fmt::format(" [{}, {}]", format_change(*c.ci_low), format_change(*c.ci_high));
  if (c.p_value) t.body += fmt::format("\np: {:.3g}", *c.p_value);
  t.body += fmt::format("\ntolerance: {}\n", format_change(c.tolerance));
  return t;
}

// The run's own testcase. An abort is an <error type="abort"> (the run was stopped, so
// nothing it would have measured failed): its message names the cause and the evidence,
// its body adds when it was decided and when the faults were reverted.
TestCase run_case(const RunResult& run) {
  const std::string_view verdict = to_string(run.verdict);
  TestCase t{"run", run.verdict == Verdict::kFail ? "failure" : "error",
             run.reason.empty() ? fmt::format("run {}", verdict) : run.reason, "run", fmt::format("verdict: {}\n", verdict)};
  if (!run.abort) return t;
  const AbortRecord& a = *run.abort;
  if (run.verdict == Verdict::kAborted) {
    t.type = "abort";
    t.message = fmt::format("aborted by {}{}", a.cause, a.evidence.empty() ? "" : ": " + a.evidence);
  }
  t.body += fmt::format("cause: {}\nevidence: {}\ndecided at: {:.3f} s\nfaults reverted at: {}\n", a.cause,
                        a.evidence.empty() ? "-" : a.evidence, a.decided_s,
                        a.reverted_s ? fmt::format("{:.3f} s", *a.reverted_s) : "-");
  return t;
}

}  // namespace

std::string render_junit(const RunResult& run) {
  std::string scenario = run.scenario_name.empty() ? "unnamed" : run.scenario_name;
  // A check carries no unit; the metric record of the same name does.
  auto unit_of = [&](const std::string& metric) {
    for (const auto& m : run.metrics)
      if (m.name == metric) return m.unit;
    return std::string();
  };
  std::vector<TestCase> cases;
  bool explained = false;  // does a failing testcase already say why the run failed?
  for (const auto& c : run.checks) {
    cases.push_back(check_case(c, unit_of(c.metric)));
    explained |= !cases.back().outcome.empty();
  }
  if (run.comparison)
    for (const auto& c : run.comparison->metrics) {
      cases.push_back(gate_case(c));
      explained |= cases.back().outcome == "failure";
    }
  // A run that errored, was interrupted, aborted or failed for a reason no check names
  // still shows red in CI: one testcase for the run itself.
  if (run.verdict != Verdict::kPass && !(run.verdict == Verdict::kFail && explained)) cases.insert(cases.begin(), run_case(run));
  make_unique(cases);

  std::size_t failures = 0, errors = 0, skipped = 0;
  for (const auto& c : cases) {
    failures += c.outcome == "failure";
    errors += c.outcome == "error";
    skipped += c.outcome == "skipped";
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"chaosbench\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     cases.size(), failures, errors, skipped, run.duration_s);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"{}>\n",
                     xml_escape(scenario), cases.size(), failures, errors, skipped, run.duration_s,
                     run.started_at.empty() ? "" : fmt::format(" timestamp=\"{}\"", xml_escape(run.started_at)));
  out += "    <properties>\n";
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"run_id", run.run_id}, {"verdict", std::string(to_string(run.verdict))}, {"seed", std::to_string(run.seed)}, {"tool_version", run.tool_version}})
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", key, xml_escape(value));
  out += "    </properties>\n";
  std::string classname = xml_escape(fmt::format("chaosbench.{}", scenario));
  for (const auto& c : cases) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", classname, xml_escape(c.name));
    if (c.outcome.empty()) {
      out += "/>\n";
      continue;
    }
    out += fmt::format(">\n      <{} message=\"{}\"", c.outcome, xml_escape(c.message));
    if (c.outcome != "skipped") out += fmt::format(" type=\"{}\"", c.type);
    out += c.body.empty() ? "/>\n" : fmt::format(">{}</{}>\n", xml_escape(c.body), c.outcome);
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace chaosbench::reports
