// chaosbench history show DIR — the trend of each metric in a history store
// (reports/history/history_trend.h, docs/history.md), as a table, JSON or Markdown.
#include <fmt/format.h>
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/cli/cli_options.h"
#include "harness/cli/cmd_history.h"
#include "harness/core/exit_code.h"
#include "harness/cli/text_table.h"
#include "reports/gate/gate_selection.h"
#include "reports/history/history_file.h"
#include "reports/history/history_json.h"
#include "reports/history/history_store.h"
#include "reports/history/history_summary.h"
#include "reports/history/history_trend.h"
#include "reports/model/text_format.h"

namespace chaosbench::harness {
namespace {

enum class ShowFormat { kTable, kJson, kMarkdown };

// "+10.2% at run R (index 17)"; several separated by "; "; "-" for none.
std::string steps_text(const std::vector<reports::HistoryStep>& steps) {
  std::string out;
  for (const auto& s : steps)
    out += fmt::format("{}{} at run {} (#{})", out.empty() ? "" : "; ", reports::format_change(s.size), s.run_id,
                       s.index);
  return out.empty() ? "-" : out;
}

void print_trends(const reports::HistoryPlace& place, std::size_t runs,
                  const std::vector<reports::HistoryTrend>& trends, ShowFormat format) {
  if (format == ShowFormat::kMarkdown) {
    std::cout << fmt::format("### {} on {} ({} runs)\n\n| metric | stat | trend | median | newest | steps |\n"
                             "|---|---|---|---:|---:|---|\n",
                             reports::markdown_cell(place.scenario), reports::markdown_cell(place.testbed), runs);
    for (const auto& t : trends)
      std::cout << fmt::format("| {} | {} | {} | {} | {} | {} |\n",
                               reports::markdown_cell(reports::key_text(t.series.key)),
                               t.series.key.stat, reports::sparkline(t.series.values),
                               reports::markdown_cell(reports::format_value(t.median, t.series.key.unit)),
                               reports::markdown_cell(reports::format_value(t.series.values.back(), t.series.key.unit)),
                               reports::markdown_cell(steps_text(t.steps)));
    std::cout << "\n";
    return;
  }
  std::cout << fmt::format("{} / {}: {} runs ({})\n", place.testbed, place.scenario, runs, place.path);
  TextTable table;
  table.rows.push_back({"metric", "stat", "n", "trend", "median", "newest", "steps"});
  table.left_columns = 4;
  for (const auto& t : trends)
    table.rows.push_back({reports::key_text(t.series.key), t.series.key.stat, std::to_string(t.series.values.size()),
                          reports::sparkline(t.series.values), reports::format_value(t.median, t.series.key.unit),
                          reports::format_value(t.series.values.back(), t.series.key.unit), steps_text(t.steps)});
  print_table(table, std::cout);
  std::cout << "\n";
}

}  // namespace

int history_show(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("dir", po::value<std::string>(), "DIR")
      ("testbed", po::value<std::string>(), "only this testbed (\"unlabelled\" for runs without a label)")
      ("scenario", po::value<std::string>(), "only this scenario")
      ("metric", po::value<std::string>(), "only this metric (a name ending in / : every metric under it)")
      ("window", po::value<std::size_t>()->default_value(30), "the last K runs (0: all)")
      ("alpha", po::value<double>()->default_value(0.01), "significance level of the steps")
      ("json", "print JSON")
      ("markdown", "print Markdown tables");
  po::positional_options_description positional;
  positional.add("dir", 1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench history show DIR [--testbed T] [--scenario S] [--metric M] [--window K]\n"
               "                               [--json | --markdown]",
               "The trend of every gated metric of each testbed x scenario in DIR: the last K values (a\n"
               "sparkline), their median, the newest value and the steps the change-point pass finds.",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("dir")) throw UsageError("expected DIR");
  if (cl.vm.count("json") && cl.vm.count("markdown")) throw UsageError("--json and --markdown exclude each other");
  const auto format = cl.vm.count("json") ? ShowFormat::kJson
                      : cl.vm.count("markdown") ? ShowFormat::kMarkdown : ShowFormat::kTable;
  reports::ChangePointOptions cp;
  cp.alpha = cl.vm["alpha"].as<double>();
  if (!(cp.alpha > 0 && cp.alpha < 1)) throw UsageError("--alpha must lie between 0 and 1");
  const auto window = cl.vm["window"].as<std::size_t>();
  const auto metric = cl.vm.count("metric") ? cl.vm["metric"].as<std::string>() : std::string();
  const auto dir = cl.vm["dir"].as<std::string>();
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::size_t shown = 0;
  for (const auto& where : reports::list_histories(dir)) {
    if (cl.vm.count("testbed") && where.testbed != testbed_label(cl.vm["testbed"].as<std::string>())) continue;
    if (cl.vm.count("scenario") && where.scenario != cl.vm["scenario"].as<std::string>()) continue;
    auto history = reports::HistoryFile::open_for_reading(where.path);
    if (!history) continue;  // removed meanwhile
    print_history_notes(history->notes());
    const auto trends = reports::history_trends(history->entries(), window, metric, cp);
    const reports::HistoryPlace place{where.testbed, where.scenario, where.path};
    ++shown;
    if (format == ShowFormat::kJson) all.push_back(reports::history_trends_json(place, history->entries(), trends));
    else print_trends(place, history->entries().size(), trends, format);
  }
  if (format == ShowFormat::kJson) std::cout << all.dump(2) << "\n";
  else if (shown == 0) std::cerr << fmt::format("chaosbench history: no history in {} matches\n", dir);
  return kExitPass;
}

}  // namespace chaosbench::harness
