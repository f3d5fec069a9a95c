// chaosbench worker train [...] — one rank of the built-in trainer. The runner builds
// this command line from the scenario (workload_launcher.cc); rank, world size, attempt
// and restart count come from the environment it sets, so a rank can also be started by
// hand.
#include "harness/cli/cmd_worker_train.h"


#include "bench/collective/rendezvous.h"
#include "bench/train/trainer.h"
#include "common/units.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/worker_args.h"
#include "harness/cli/exit_code.h"

namespace chaosbench::harness {
namespace {

bench::train::RecoveryMode recovery_mode(const std::string& s) {
  if (s == "none") return bench::train::RecoveryMode::kNone;
  if (s == "restart") return bench::train::RecoveryMode::kRestart;
  if (s == "elastic") return bench::train::RecoveryMode::kElastic;
  throw UsageError("--recovery: expected none, restart or elastic, got \"" + s + "\"");
}

po::options_description train_options() {
  po::options_description options("Options");
  options.add_options()
      ("layers", po::value<std::string>()->default_value("256,1024,1024,1024,16"), "layer widths, input first")
      ("batch-size", po::value<int>()->default_value(1024), "global batch (all ranks together)")
      ("steps", po::value<std::int64_t>()->default_value(400), "optimizer steps")
      ("seed", po::value<std::uint64_t>()->default_value(42), "model and data seed")
      ("target-loss", po::value<double>(), "report target_reached when the loss gets there")
      ("optimizer", po::value<std::string>()->default_value("sgd"), "sgd or adamw")
      ("lr", po::value<float>()->default_value(0.05f), "learning rate")
      ("momentum", po::value<float>()->default_value(0.9f), "SGD momentum")
      ("weight-decay", po::value<float>()->default_value(0.0f), "weight decay")
      ("beta1", po::value<float>()->default_value(0.9f), "AdamW beta1")
      ("beta2", po::value<float>()->default_value(0.999f), "AdamW beta2")
      ("eps", po::value<float>()->default_value(1e-8f), "AdamW epsilon")
      ("bucket-size", po::value<std::string>()->default_value("1MiB"), "gradient bucket size")
      ("algorithm", po::value<std::string>()->default_value("tcp_ring"), "gradient allreduce: tcp_ring, or bcube or ring (gloo)")
      ("threads", po::value<int>()->default_value(1), "BLAS threads")
      ("device", po::value<std::string>()->default_value("cpu"), "cpu or cuda")
      ("backend", po::value<std::string>()->default_value("gloo"), "gradient allreduce: gloo or nccl (with cuda)")
      ("checkpoint-dir", po::value<std::string>()->default_value(""), "checkpoint directory (empty: none)")
      ("checkpoint-every", po::value<int>()->default_value(0), "steps between checkpoints (0: none)")
      ("checkpoint-mode", po::value<std::string>()->default_value("incremental"), "incremental or full")
      ("checkpoint-full-every", po::value<int>()->default_value(4), "incremental: every K-th checkpoint is full")
      ("checkpoint-async", po::value<bool>()->default_value(true), "write checkpoints in the background (0 or 1)")
      ("recovery", po::value<std::string>()->default_value("none"), "none, restart or elastic")
      ("store", po::value<std::string>()->default_value(""), "rendezvous store, file:/dir")
      ("prefix", po::value<std::string>()->default_value("chaosbench"), "store key prefix")
      ("host", po::value<std::string>()->default_value("127.0.0.1"), "address to bind")
      ("timeout-ms", po::value<long>()->default_value(10000), "collective timeout")
      ("settle-ms", po::value<long>()->default_value(300), "elastic: how long survivors wait for each other")
      ("watchdog-ms", po::value<long>()->default_value(0), "a step longer than this ends the rank (0: no watchdog)")
      ("sdc-check-every", po::value<int>()->default_value(1), "replicas compare fingerprints every N steps (0: never)");
  return options;
}

// The model, data and optimizer half of the configuration.
void read_model_options(const po::variables_map& vm, bench::train::TrainConfig& cfg) {
  cfg.rank = env_int("CHAOSBENCH_RANK", 0);
  cfg.world_size = env_int("CHAOSBENCH_WORLD_SIZE", 1);
  cfg.attempt = env_int("CHAOSBENCH_ATTEMPT", 0);
  cfg.layers = int_list(vm["layers"].as<std::string>(), "layers");
  cfg.batch_size = vm["batch-size"].as<int>();
  cfg.steps = vm["steps"].as<std::int64_t>();
  cfg.seed = vm["seed"].as<std::uint64_t>();
  if (vm.count("target-loss")) cfg.target_loss = vm["target-loss"].as<double>();
  cfg.optimizer.kind = vm["optimizer"].as<std::string>();
  cfg.optimizer.lr = vm["lr"].as<float>();
  cfg.optimizer.momentum = vm["momentum"].as<float>();
  cfg.optimizer.weight_decay = vm["weight-decay"].as<float>();
  cfg.optimizer.beta1 = vm["beta1"].as<float>();
  cfg.optimizer.beta2 = vm["beta2"].as<float>();
  cfg.optimizer.eps = vm["eps"].as<float>();
}

// The communication, checkpoint and recovery half, checked as a whole.
void read_run_options(const po::variables_map& vm, bench::train::TrainConfig& cfg) {
  auto bucket = common::parse_size(vm["bucket-size"].as<std::string>());
  if (!bucket) throw UsageError("--bucket-size: " + bucket.error);
  cfg.bucket_bytes = bucket->bytes;
  const auto algorithm = vm["algorithm"].as<std::string>();
  if (algorithm != "bcube" && algorithm != "ring" && algorithm != "tcp_ring")
    throw UsageError("--algorithm: expected bcube, ring or tcp_ring");
  cfg.algorithm = algorithm == "ring"       ? bench::train::AllreduceAlgorithm::kRing
                  : algorithm == "tcp_ring" ? bench::train::AllreduceAlgorithm::kTcpRing
                                            : bench::train::AllreduceAlgorithm::kBcube;
  cfg.threads = vm["threads"].as<int>();
  cfg.device = vm["device"].as<std::string>();
  cfg.backend = vm["backend"].as<std::string>();
  cfg.checkpoint_dir = vm["checkpoint-dir"].as<std::string>();
  cfg.checkpoint_every = vm["checkpoint-every"].as<int>();
  const auto mode = vm["checkpoint-mode"].as<std::string>();
  if (mode != "incremental" && mode != "full") throw UsageError("--checkpoint-mode: expected incremental or full");
  cfg.checkpoint_incremental = mode == "incremental";
  cfg.checkpoint_full_every = vm["checkpoint-full-every"].as<int>();
  cfg.checkpoint_async = vm["checkpoint-async"].as<bool>();
  cfg.recovery = recovery_mode(vm["recovery"].as<std::string>());
  cfg.rejoin = cfg.recovery == bench::train::RecoveryMode::kElastic && env_int("CHAOSBENCH_RESTART", 0) > 0;
  cfg.store = vm["store"].as<std::string>();
  if (!cfg.store.empty()) {
    try {
      bench::store_directory(cfg.store);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--store: ") + e.what());
    }
  }
  if (cfg.recovery == bench::train::RecoveryMode::kElastic && cfg.store.empty())
    throw UsageError("--recovery elastic needs --store");
  cfg.prefix = vm["prefix"].as<std::string>();
  cfg.host = vm["host"].as<std::string>();
  cfg.timeout = std::chrono::milliseconds(vm["timeout-ms"].as<long>());
  cfg.settle = std::chrono::milliseconds(vm["settle-ms"].as<long>());
  cfg.watchdog = std::chrono::milliseconds(vm["watchdog-ms"].as<long>());
  cfg.sdc_check_every = vm["sdc-check-every"].as<int>();
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
  bench::train::TrainConfig cfg;
  read_model_options(cl.vm, cfg);
  read_run_options(cl.vm, cfg);
  if (auto why = bench::train::train_config_error(cfg)) throw UsageError(*why);
  auto metrics = bench::MetricsClient::from_environment();
  return bench::train::run_trainer(cfg, metrics);
}

}  // namespace chaosbench::harness
