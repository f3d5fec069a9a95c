#include "bench/train/train_settings.h"

#include <fmt/format.h>

#include "bench/common/settings_table.h"

namespace chaosbench::bench::train {
namespace {

using TS = TrainSettings;

ChoiceCodec<RecoveryMode> recovery_names() {
  ChoiceCodec<RecoveryMode> c;
  for (auto m : {RecoveryMode::kNone, RecoveryMode::kRestart, RecoveryMode::kElastic}) c.names.emplace_back(to_string(m), m);
  return c;
}

// Every dimension at least its minimum and at most more than any world this trainer
// runs, which keeps tp × pp × dp in an int.
std::string parallel_range_error(const TS& s) {
  constexpr int kMaxParallel = 1 << 12;
  const auto in_range = [](int v, int lo) { return v >= lo && v <= kMaxParallel; };
  const auto& p = s.parallel;
  if (in_range(p.tp, 1) && in_range(p.pp, 1) && in_range(p.dp, 0) && in_range(p.microbatches, 1)) return "";
  return fmt::format("--tp, --pp and --microbatches must be in 1..{}, --dp in 0..{}", kMaxParallel, kMaxParallel);
}

// In the order the launcher has always written them. Parallel flags only for a hybrid
// job (or an explicit dp or microbatches), checkpoint flags only when it checkpoints.
void add_train_rows(SettingsTable<TS>& t) {
  t.add("layers", &TS::layers, "layer widths, input first")
      .add("batch-size", &TS::batch_size, "global batch (all ranks together)")
      .add("steps", &TS::steps, "optimizer steps")
      .add("optimizer", &TS::optimizer, "sgd or adamw")
      .add("lr", &TS::lr, "learning rate")
      .add("momentum", &TS::momentum, "SGD momentum")
      .add("weight-decay", &TS::weight_decay, "weight decay")
      .add("beta1", &TS::beta1, "AdamW beta1")
      .add("beta2", &TS::beta2, "AdamW beta2")
      .add("eps", &TS::eps, "AdamW epsilon")
      .add("bucket-size", &TS::bucket_size, "gradient bucket size")
      .add("algorithm", &TS::algorithm, "gradient allreduce: tcp_ring, or bcube or ring (gloo)",
           choices_of({"bcube", "ring", "tcp_ring"}))
      .add("threads", &TS::threads, "BLAS threads")
      .add("device", &TS::device, "cpu or cuda")
      .add("backend", &TS::backend, "gradient allreduce: gloo or nccl (with cuda)")
      .add("recovery", [](TS& s) -> RecoveryMode& { return s.recovery.mode; }, "none, restart or elastic",
           recovery_names())
      .add("timeout-ms", &TS::timeout, "collective timeout", MillisCodec{});
  t.when([](const TS& s) {
     const auto& p = s.parallel;
     return p.hybrid() || p.dp > 0 || p.microbatches != 1;
   })
      .add("tp", [](TS& s) -> int& { return s.parallel.tp; }, "tensor-parallel size")
      .add("pp", [](TS& s) -> int& { return s.parallel.pp; }, "pipeline stages")
      .add("dp", [](TS& s) -> int& { return s.parallel.dp; }, "data-parallel replicas (0: world / (tp x pp))")
      .add("microbatches", [](TS& s) -> int& { return s.parallel.microbatches; }, "microbatches per replica and step")
      .add("schedule", [](TS& s) -> std::string& { return s.parallel.schedule; }, "pipeline schedule: gpipe or 1f1b",
           choices_of({"gpipe", "1f1b"}))
      .always()
      .add_optional("sdc-check-every", &TS::sdc_check_every, "replicas compare fingerprints every N steps (0: never)",
                    kDefaultSdcCheckEvery)
      .add("target-loss", &TS::target_loss, "report target_reached when the loss gets there");
  t.when([](const TS& s) { return s.checkpoint.every_steps > 0; })
      .add("checkpoint-dir", [](TS& s) -> std::string& { return s.checkpoint.dir; }, "checkpoint directory (empty: none)")
      .add("checkpoint-every", [](TS& s) -> int& { return s.checkpoint.every_steps; },
           "steps between checkpoints (0: none)")
      .add("checkpoint-mode", [](TS& s) -> bool& { return s.checkpoint.incremental; }, "incremental or full",
           ChoiceCodec<bool>{{{"incremental", true}, {"full", false}}})
      .add("checkpoint-full-every", [](TS& s) -> int& { return s.checkpoint.full_every; },
           "incremental: every K-th checkpoint is full")
      .add("checkpoint-async", [](TS& s) -> bool& { return s.checkpoint.async; },
           "write checkpoints in the background (0 or 1)")
      .always()
      .check(parallel_range_error);
}

const SettingsTable<TS>& train_settings_table() {
  static const SettingsTable<TS> table = [] {
    SettingsTable<TS> t;
    add_train_rows(t);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> encode_train_settings(const TrainSettings& s) { return train_settings_table().encode(s); }

void add_train_settings_flags(boost::program_options::options_description& options) {
  train_settings_table().declare(options);
}

TrainSettings read_train_settings(const boost::program_options::variables_map& vm) {
  return train_settings_table().read(vm);
}

TrainSettings decode_train_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_train_settings_flags, read_train_settings);
}

}  // namespace chaosbench::bench::train
