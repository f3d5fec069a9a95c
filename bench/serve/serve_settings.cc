#include "bench/serve/serve_settings.h"

#include "bench/common/settings_table.h"

namespace chaosbench::bench::serve {
namespace {

using SS = ServeSettings;

const SettingsTable<SS>& serve_settings_table() {
  static const SettingsTable<SS> table = [] {
    SettingsTable<SS> t;
    t.add("model", &SS::model_name, "model name in /v2/models/NAME")
        .add("layers", &SS::layers, "layer widths, input first")
        .add("dtype", &SS::dtype, "fp32 or int8 weights")
        .add("port", &SS::port, "port to listen on (0: any)", PortCodec{})
        .add("max-batch-size", [](SS& s) -> int& { return s.batching.max_batch_size; }, "rows per model call")
        .add("max-queue-delay-us", [](SS& s) -> common::Duration& { return s.batching.max_queue_delay; },
             "how long a request waits for a batch", MicrosCodec{})
        .add("queue-limit", &SS::queue_limit, "waiting requests before 503");
    t.when([](const SS& s) { return !s.batching.preferred_batch_sizes.empty(); })
        .add("preferred-batch-sizes", [](SS& s) -> std::vector<int>& { return s.batching.preferred_batch_sizes; },
             "comma-separated; dispatch at once at the largest");
    t.when([](const SS& s) { return !s.checkpoint_dir.empty(); })
        .add("checkpoint-dir", &SS::checkpoint_dir, "the trainer's checkpoints (empty: seeded weights)");
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> encode_serve_settings(const ServeSettings& s) { return serve_settings_table().encode(s); }

void add_serve_settings_flags(boost::program_options::options_description& options) {
  serve_settings_table().declare(options);
}

ServeSettings read_serve_settings(const boost::program_options::variables_map& vm) { return serve_settings_table().read(vm); }

ServeSettings decode_serve_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_serve_settings_flags, read_serve_settings);
}

}  // namespace chaosbench::bench::serve
