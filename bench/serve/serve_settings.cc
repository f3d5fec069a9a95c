#include "bench/serve/serve_settings.h"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "bench/common/flag_values.h"

namespace chaosbench::bench::serve {

namespace po = boost::program_options;

namespace {

long whole_us(common::Duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(d.value).count());
}

}  // namespace

std::vector<std::string> encode_serve_settings(const ServeSettings& s) {
  std::vector<std::string> flags{"--model", s.model_name,
                                 "--layers", join_list(s.layers),
                                 "--dtype", s.dtype,
                                 "--port", std::to_string(s.port),
                                 "--max-batch-size", std::to_string(s.batching.max_batch_size),
                                 "--max-queue-delay-us", std::to_string(whole_us(s.batching.max_queue_delay)),
                                 "--queue-limit", std::to_string(s.queue_limit)};
  if (!s.batching.preferred_batch_sizes.empty())
    flags.insert(flags.end(), {"--preferred-batch-sizes", join_list(s.batching.preferred_batch_sizes)});
  if (!s.checkpoint_dir.empty()) flags.insert(flags.end(), {"--checkpoint-dir", s.checkpoint_dir});
  return flags;
}

void add_serve_settings_flags(po::options_description& options) {
  const ServeSettings d;
  options.add_options()
      ("model", po::value<std::string>()->default_value(d.model_name), "model name in /v2/models/NAME")
      ("layers", po::value<std::string>()->default_value(join_list(d.layers)), "layer widths, input first")
      ("dtype", po::value<std::string>()->default_value(d.dtype), "fp32 or int8 weights")
      ("checkpoint-dir", po::value<std::string>()->default_value(d.checkpoint_dir),
       "the trainer's checkpoints (empty: seeded weights)")
      ("port", po::value<unsigned short>()->default_value(static_cast<unsigned short>(d.port)),
       "port to listen on (0: any)")
      ("max-batch-size", po::value<int>()->default_value(d.batching.max_batch_size), "rows per model call")
      ("max-queue-delay-us", po::value<long>()->default_value(whole_us(d.batching.max_queue_delay)),
       "how long a request waits for a batch")
      ("preferred-batch-sizes", po::value<std::string>()->default_value(join_list(d.batching.preferred_batch_sizes)),
       "comma-separated; dispatch at once at the largest")
      ("queue-limit", po::value<int>()->default_value(d.queue_limit), "waiting requests before 503");
}

ServeSettings read_serve_settings(const po::variables_map& vm) {
  ServeSettings s;
  s.model_name = vm["model"].as<std::string>();
  s.layers = int_list(vm["layers"].as<std::string>(), "layers");
  s.dtype = vm["dtype"].as<std::string>();
  s.checkpoint_dir = vm["checkpoint-dir"].as<std::string>();
  s.port = vm["port"].as<unsigned short>();
  s.batching.max_batch_size = vm["max-batch-size"].as<int>();
  s.batching.max_queue_delay = common::Duration{std::chrono::microseconds(vm["max-queue-delay-us"].as<long>())};
  s.batching.preferred_batch_sizes = int_list(vm["preferred-batch-sizes"].as<std::string>(), "preferred-batch-sizes");
  s.queue_limit = vm["queue-limit"].as<int>();
  return s;
}

ServeSettings decode_serve_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_serve_settings_flags, read_serve_settings);
}

}  // namespace chaosbench::bench::serve
