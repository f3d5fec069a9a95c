// chaosbench worker train [...] — one rank of the built-in trainer. The runner builds
// this command line from the scenario (workload_launcher.cc); rank, world size, attempt
// and restart count come from the environment it sets, so a rank can also be started by
// hand.
#include "harness/cli/worker/cmd_worker_train.h"

#include "bench/rendezvous/rendezvous.h"
#include "bench/train/train_config.h"
#include "bench/train/train_settings.h"
#include "bench/train/trainer.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/worker/worker_args.h"
#include "harness/core/exit_code.h"

namespace chaosbench::harness {
namespace {

// The per-launch flags; the settings' own come from train_settings.h.
po::options_description train_options() {
  po::options_description options("Options");
  bench::train::add_train_settings_flags(options);
  options.add_options()
      ("seed", po::value<std::uint64_t>()->default_value(42), "model and data seed")
      ("store", po::value<std::string>()->default_value(""), "rendezvous store, file:/dir")
      ("prefix", po::value<std::string>()->default_value("chaosbench"), "store key prefix")
      ("host", po::value<std::string>()->default_value("127.0.0.1"), "address to bind")
      ("settle-ms", po::value<long>()->default_value(300), "elastic: how long survivors wait for each other")
      ("watchdog-ms", po::value<long>()->default_value(0), "a step longer than this ends the rank (0: no watchdog)");
  return options;
}

// The settings, then what this launch adds: who this rank is and where the ranks meet.
bench::train::TrainConfig read_config(const po::variables_map& vm) {
  auto cfg = bench::train::train_config(read_settings(vm, bench::train::read_train_settings));
  cfg.rank = env_int("CHAOSBENCH_RANK", 0);
  cfg.world_size = env_int("CHAOSBENCH_WORLD_SIZE", 1);
  cfg.attempt = env_int("CHAOSBENCH_ATTEMPT", 0);
  cfg.seed = vm["seed"].as<std::uint64_t>();
  cfg.rejoin = cfg.recovery == bench::train::RecoveryMode::kElastic && env_int("CHAOSBENCH_RESTART", 0) > 0;
  cfg.store = vm["store"].as<std::string>();
  if (!cfg.store.empty()) {
    try {
      bench::parse_store_spec(cfg.store);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--store: ") + e.what());
    }
  }
  if (cfg.recovery == bench::train::RecoveryMode::kElastic && cfg.store.empty())
    throw UsageError("--recovery elastic needs --store");
  cfg.prefix = vm["prefix"].as<std::string>();
  cfg.host = vm["host"].as<std::string>();
  cfg.settle = std::chrono::milliseconds(vm["settle-ms"].as<long>());
  cfg.watchdog = std::chrono::milliseconds(vm["watchdog-ms"].as<long>());
  return cfg;
}

}  // namespace

int worker_train(const Args& args) {
  po::options_description options = train_options();
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker train [options]",
               "One rank of the built-in data-parallel trainer. Reads CHAOSBENCH_RANK, CHAOSBENCH_WORLD_SIZE,\n"
               "CHAOSBENCH_ATTEMPT, CHAOSBENCH_RESTART and CHAOSBENCH_METRICS from the environment.",
               options);
    return kExitPass;
  }
  const auto cfg = read_config(cl.vm);
  if (auto why = bench::train::train_config_error(cfg)) throw UsageError(*why);
  auto metrics = bench::MetricsClient::from_environment();
  return bench::train::run_trainer(cfg, metrics);
}

}  // namespace chaosbench::harness
