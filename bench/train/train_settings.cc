#include "bench/train/train_settings.h"

#include <stdexcept>

#include <fmt/format.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_values.h"

namespace chaosbench::bench::train {

namespace po = boost::program_options;

std::vector<std::string> encode_train_settings(const TrainSettings& s) {
  std::vector<std::string> flags{"--layers", join_list(s.layers),
                                 "--batch-size", std::to_string(s.batch_size),
                                 "--steps", std::to_string(s.steps),
                                 "--optimizer", s.optimizer,
                                 "--lr", fmt::format("{}", s.lr),
                                 "--momentum", fmt::format("{}", s.momentum),
                                 "--weight-decay", fmt::format("{}", s.weight_decay),
                                 "--beta1", fmt::format("{}", s.beta1),
                                 "--beta2", fmt::format("{}", s.beta2),
                                 "--eps", fmt::format("{}", s.eps),
                                 "--bucket-size", size_flag(s.bucket_size),
                                 "--algorithm", s.algorithm,
                                 "--threads", std::to_string(s.threads),
                                 "--device", s.device,
                                 "--backend", s.backend,
                                 "--recovery", to_string(s.recovery.mode),
                                 "--timeout-ms", ms_flag(s.timeout)};
  const auto& p = s.parallel;
  if (p.hybrid() || p.dp > 0 || p.microbatches != 1)
    flags.insert(flags.end(), {"--tp", std::to_string(p.tp), "--pp", std::to_string(p.pp), "--dp", std::to_string(p.dp),
                               "--microbatches", std::to_string(p.microbatches), "--schedule", p.schedule});
  if (s.sdc_check_every) flags.insert(flags.end(), {"--sdc-check-every", std::to_string(*s.sdc_check_every)});
  if (s.target_loss) flags.insert(flags.end(), {"--target-loss", fmt::format("{}", *s.target_loss)});
  const auto& c = s.checkpoint;
  if (c.every_steps > 0)
    flags.insert(flags.end(), {"--checkpoint-dir", c.dir, "--checkpoint-every", std::to_string(c.every_steps),
                               "--checkpoint-mode", c.incremental ? "incremental" : "full",
                               "--checkpoint-full-every", std::to_string(c.full_every),
                               "--checkpoint-async", c.async ? "1" : "0"});
  return flags;
}

void add_train_settings_flags(po::options_description& options) {
  const TrainSettings d;
  options.add_options()
      ("layers", po::value<std::string>()->default_value(join_list(d.layers)), "layer widths, input first")
      ("batch-size", po::value<int>()->default_value(d.batch_size), "global batch (all ranks together)")
      ("steps", po::value<std::int64_t>()->default_value(d.steps), "optimizer steps")
      ("target-loss", po::value<double>(), "report target_reached when the loss gets there")
      ("optimizer", po::value<std::string>()->default_value(d.optimizer), "sgd or adamw")
      ("lr", po::value<float>()->default_value(d.lr), "learning rate")
      ("momentum", po::value<float>()->default_value(d.momentum), "SGD momentum")
      ("weight-decay", po::value<float>()->default_value(d.weight_decay), "weight decay")
      ("beta1", po::value<float>()->default_value(d.beta1), "AdamW beta1")
      ("beta2", po::value<float>()->default_value(d.beta2), "AdamW beta2")
      ("eps", po::value<float>()->default_value(d.eps), "AdamW epsilon")
      ("bucket-size", po::value<std::string>()->default_value(common::to_string(d.bucket_size)), "gradient bucket size")
      ("algorithm", po::value<std::string>()->default_value(d.algorithm), "gradient allreduce: tcp_ring, or bcube or ring (gloo)")
      ("threads", po::value<int>()->default_value(d.threads), "BLAS threads")
      ("device", po::value<std::string>()->default_value(d.device), "cpu or cuda")
      ("backend", po::value<std::string>()->default_value(d.backend), "gradient allreduce: gloo or nccl (with cuda)")
      ("checkpoint-dir", po::value<std::string>()->default_value(d.checkpoint.dir), "checkpoint directory (empty: none)")
      ("checkpoint-every", po::value<int>()->default_value(d.checkpoint.every_steps), "steps between checkpoints (0: none)")
      ("checkpoint-mode", po::value<std::string>()->default_value(d.checkpoint.incremental ? "incremental" : "full"),
       "incremental or full")
      ("checkpoint-full-every", po::value<int>()->default_value(d.checkpoint.full_every), "incremental: every K-th checkpoint is full")
      ("checkpoint-async", po::value<bool>()->default_value(d.checkpoint.async), "write checkpoints in the background (0 or 1)")
      ("recovery", po::value<std::string>()->default_value(to_string(d.recovery.mode)), "none, restart or elastic")
      ("timeout-ms", po::value<long>()->default_value(whole_ms(d.timeout)), "collective timeout")
      ("tp", po::value<int>()->default_value(d.parallel.tp), "tensor-parallel size")
      ("pp", po::value<int>()->default_value(d.parallel.pp), "pipeline stages")
      ("dp", po::value<int>()->default_value(d.parallel.dp), "data-parallel replicas (0: world / (tp x pp))")
      ("microbatches", po::value<int>()->default_value(d.parallel.microbatches), "microbatches per replica and step")
      ("schedule", po::value<std::string>()->default_value(d.parallel.schedule), "pipeline schedule: gpipe or 1f1b")
      ("sdc-check-every", po::value<int>()->default_value(kDefaultSdcCheckEvery),
       "replicas compare fingerprints every N steps (0: never)");
}

TrainSettings read_train_settings(const po::variables_map& vm) {
  TrainSettings s;
  s.layers = int_list(vm["layers"].as<std::string>(), "layers");
  s.batch_size = vm["batch-size"].as<int>();
  s.steps = vm["steps"].as<std::int64_t>();
  if (vm.count("target-loss")) s.target_loss = vm["target-loss"].as<double>();
  s.optimizer = vm["optimizer"].as<std::string>();
  s.lr = vm["lr"].as<float>();
  s.momentum = vm["momentum"].as<float>();
  s.weight_decay = vm["weight-decay"].as<float>();
  s.beta1 = vm["beta1"].as<float>();
  s.beta2 = vm["beta2"].as<float>();
  s.eps = vm["eps"].as<float>();
  s.bucket_size = read_size_flag(vm, "bucket-size");
  s.algorithm = vm["algorithm"].as<std::string>();
  if (s.algorithm != "bcube" && s.algorithm != "ring" && s.algorithm != "tcp_ring")
    throw std::invalid_argument("--algorithm: expected bcube, ring or tcp_ring");
  s.threads = vm["threads"].as<int>();
  s.device = vm["device"].as<std::string>();
  s.backend = vm["backend"].as<std::string>();
  s.checkpoint.dir = vm["checkpoint-dir"].as<std::string>();
  s.checkpoint.every_steps = vm["checkpoint-every"].as<int>();
  const auto mode = vm["checkpoint-mode"].as<std::string>();
  if (mode != "incremental" && mode != "full") throw std::invalid_argument("--checkpoint-mode: expected incremental or full");
  s.checkpoint.incremental = mode == "incremental";
  s.checkpoint.full_every = vm["checkpoint-full-every"].as<int>();
  s.checkpoint.async = vm["checkpoint-async"].as<bool>();
  const auto recovery = vm["recovery"].as<std::string>();
  const auto recovery_mode = parse_recovery_mode(recovery);
  if (!recovery_mode) throw std::invalid_argument("--recovery: expected none, restart or elastic, got \"" + recovery + "\"");
  s.recovery.mode = *recovery_mode;
  s.timeout = common::Duration{std::chrono::milliseconds(vm["timeout-ms"].as<long>())};
  s.parallel.tp = vm["tp"].as<int>();
  s.parallel.pp = vm["pp"].as<int>();
  s.parallel.dp = vm["dp"].as<int>();
  s.parallel.microbatches = vm["microbatches"].as<int>();
  s.parallel.schedule = vm["schedule"].as<std::string>();
  constexpr int kMaxParallel = 1 << 12;  // more than any world this trainer runs; keeps tp × pp × dp in an int
  const auto in_range = [](int v, int lo) { return v >= lo && v <= kMaxParallel; };
  if (!in_range(s.parallel.tp, 1) || !in_range(s.parallel.pp, 1) || !in_range(s.parallel.dp, 0) ||
      !in_range(s.parallel.microbatches, 1))
    throw std::invalid_argument(fmt::format("--tp, --pp and --microbatches must be in 1..{}, --dp in 0..{}",
                                            kMaxParallel, kMaxParallel));
  if (s.parallel.schedule != "gpipe" && s.parallel.schedule != "1f1b")
    throw std::invalid_argument("--schedule: expected gpipe or 1f1b, got \"" + s.parallel.schedule + "\"");
  // Left unset when not given, so that the worker's default stays its own (see the field).
  if (!vm["sdc-check-every"].defaulted()) s.sdc_check_every = vm["sdc-check-every"].as<int>();
  return s;
}

TrainSettings decode_train_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_train_settings_flags, read_train_settings);
}

}  // namespace chaosbench::bench::train
