// chaosbench model goodput [RESULTS.json] [options] — the goodput model
// (reports/goodput/goodput_model.h, docs/goodput-model.md): goodput and ETTR from 1 to 100,000
// nodes with the optimal checkpoint interval, and the run's own prediction interval, as a
// table, JSON or a self-contained HTML page. Flags: model_goodput_options.h.
#include <fmt/format.h>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/files/safe_files.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/commands.h"
#include "harness/core/exit_code.h"
#include "harness/cli/model_goodput_options.h"
#include "harness/cli/results_file.h"
#include "harness/cli/text_table.h"
#include "reports/goodput/goodput_assumptions.h"
#include "reports/goodput/goodput_json.h"
#include "reports/goodput/goodput_table.h"
#include "reports/render/html/goodput_page.h"

namespace chaosbench::harness {
namespace {

constexpr const char* kModelSynopsis = "chaosbench model goodput [RESULTS.json] [options]";
constexpr const char* kModelSummary =
    "Predicts goodput and ETTR of a training job for N nodes from 1 to 100,000 from its recovery costs (measured\n"
    "in RESULTS.json, given, or assumed) and a failure model (per-node MTBF, poisson or Weibull), with the optimal\n"
    "checkpoint interval by Young, Daly and a Monte Carlo of the same mechanism; and for the run itself, a 95%\n"
    "prediction interval of its goodput to hold its measured goodput against. docs/goodput-model.md explains it.\n"
    "Exit codes: 0 done, 2 a usage error, an unreadable results file or an input out of range, 3 the HTML page\n"
    "could not be written.";

TextTable text_table(const reports::TextRows& rows, std::size_t left) {
  TextTable t;
  t.rows = rows;
  t.notes.assign(rows.size(), "");
  t.left_columns = left;
  return t;
}

void print_list(const char* title, const std::vector<std::string>& items, std::ostream& out) {
  if (items.empty()) return;
  out << "\n" << title << ":\n";
  for (const auto& i : items) out << "  - " << i << "\n";
}

void print_goodput(const reports::GoodputReport& r, std::ostream& out) {
  const auto& in = r.inputs;
  const std::string rejoin =
      in.rejoin_s.value > 0 ? " + rejoin " + reports::format_duration_s(in.rejoin_s.value) : std::string();
  out << fmt::format("Goodput model: checkpoint every {} (C {}), downtime per failure {} (D {} + Rs {} + Rr {}{}), "
                     "per-node MTBF {}, {} failures, {} mode\n",
                     reports::format_duration_s(in.checkpoint_interval_s.value),
                     reports::format_duration_s(in.checkpoint_cost_s.value),
                     reports::format_duration_s(in.downtime_s()), reports::format_duration_s(in.detect_s.value),
                     reports::format_duration_s(in.restart_s.value), reports::format_duration_s(in.restore_s.value),
                     rejoin, reports::format_duration_s(in.node_mtbf_s.value), to_string(in.process),
                     to_string(in.lost_work));
  if (r.run) out << "\n" << reports::goodput_prediction_text(r) << "\n" << reports::goodput_ettr_text(r) << "\n";
  out << "\nGoodput (% of wall time) at the current interval; optimal interval; Monte Carlo goodput there; "
         "* the run's N\n";
  print_table(text_table(reports::goodput_table_rows(r), 1), out);
  out << "\nInputs:\n";
  print_table(text_table(reports::goodput_input_rows(r), 4), out);
  print_list("Notes", in.notes, out);
  print_list("Assumptions", r.assumptions, out);
}

int model_goodput(const Args& args) {
  po::options_description options("Options");
  options.add_options()("results", po::value<std::vector<std::string>>()->multitoken(), "RESULTS.json");
  add_goodput_flags(options);
  po::positional_options_description positional;
  positional.add("results", -1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help(kModelSynopsis, kModelSummary, options);
    return kExitPass;
  }
  std::vector<std::string> files;
  if (cl.vm.count("results")) files = cl.vm["results"].as<std::vector<std::string>>();
  if (files.size() > 1) throw UsageError("expected at most one RESULTS.json");
  std::optional<reports::RunResult> run;
  if (!files.empty() && !(run = load_results_file("model", files[0]))) return kExitUsage;
  const auto model = goodput_model_from(cl.vm);
  reports::GoodputReport report;
  try {
    report = model.run(goodput_inputs_from(cl.vm, run));
  } catch (const std::invalid_argument& e) {
    std::cerr << fmt::format("chaosbench model: {}{}\n", files.empty() ? "" : files[0] + ": ", e.what());
    return kExitUsage;
  }
  if (cl.vm.count("json")) std::cout << reports::goodput_json(report).dump(2) << "\n";
  else print_goodput(report, std::cout);
  if (cl.vm.count("html")) {
    const auto file = cl.vm["html"].as<std::string>();
    if (auto error = common::write_file_atomically(file, reports::html::goodput_page_html(report), 0644);
        !error.empty()) {
      std::cerr << fmt::format("chaosbench model: cannot write the HTML page: {}\n", error);
      return exit_code_for(reports::Verdict::kError, VerdictSource::kHostLimit);
    }
  }
  return kExitPass;
}

}  // namespace

int cmd_model(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout)
        << fmt::format("Usage: {}\n\n{}\n`chaosbench model goodput --help` lists the options.\n", kModelSynopsis,
                       kModelSummary);
    return args.empty() ? kExitUsage : kExitPass;
  }
  if (args[0] == "goodput") return model_goodput(Args(args.begin() + 1, args.end()));
  throw UsageError(fmt::format("unknown model \"{}\": expected goodput", args[0]));
}

}  // namespace chaosbench::harness
