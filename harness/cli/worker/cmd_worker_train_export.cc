// chaosbench worker train-export --layers ... --seed S --batch-size B --steps N --out DIR
// Writes what `worker train` starts from, so that an outside reference can compute the
// same steps: DIR/params.f32 (MlpModel::init(seed) on the CPU device, the flat layout of
// mlp_model.h: per layer weight [out x in] row-major, then bias [out]), DIR/x.f32 and
// DIR/y.f32 (the global batches of steps 0..N-1 from SyntheticDataset(in, out, seed):
// [N*B x in] and [N*B x out]), all little-endian float32, and DIR/meta.json.
#include "harness/cli/worker/cmd_worker_train_export.h"

#include <bit>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "bench/common/flag_values.h"
#include "bench/compute/cpu_device.h"
#include "bench/compute/mlp_model.h"
#include "bench/compute/synthetic_data.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"

namespace chaosbench::harness {
namespace {

void write_floats(const std::filesystem::path& path, const std::vector<float>& v) {
  static_assert(std::endian::native == std::endian::little, "the files are little-endian float32");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int worker_train_export(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("layers", po::value<std::string>(), "layer widths, input first (as worker train)")
      ("seed", po::value<std::uint64_t>()->default_value(42), "model and data seed (as worker train)")
      ("batch-size", po::value<int>(), "global batch")
      ("steps", po::value<int>(), "steps whose batches to write")
      ("out", po::value<std::string>(), "directory to write (created)");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker train-export --layers W,... --batch-size B --steps N --out DIR [--seed S]",
               "Writes the built-in trainer's initial parameters (params.f32) and the global batches of\n"
               "steps 0..N-1 (x.f32, y.f32), little-endian float32, and meta.json, for a reference\n"
               "implementation to train from the same start.",
               options);
    return kExitPass;
  }
  for (const char* flag : {"layers", "batch-size", "steps", "out"})
    if (!cl.vm.count(flag)) throw UsageError(std::string("--") + flag + " is required");
  std::vector<int> layers;
  try {
    layers = bench::int_list(cl.vm["layers"].as<std::string>(), "layers");
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const auto seed = cl.vm["seed"].as<std::uint64_t>();
  const int batch = cl.vm["batch-size"].as<int>(), steps = cl.vm["steps"].as<int>();
  if (layers.size() < 2) throw UsageError("--layers: expected at least two widths");
  if (batch < 1 || steps < 1) throw UsageError("--batch-size and --steps must be at least 1");
  const std::filesystem::path dir = cl.vm["out"].as<std::string>();
  std::filesystem::create_directories(dir);

  auto device = bench::train::make_cpu_device(1);
  bench::train::MlpModel model(*device, layers, 1);
  model.init(seed);
  std::vector<float> params(model.param_count());
  device->to_host(params.data(), model.params(), params.size());
  write_floats(dir / "params.f32", params);

  const bench::train::SyntheticDataset data(layers.front(), layers.back(), seed);
  const std::size_t samples = static_cast<std::size_t>(steps) * static_cast<std::size_t>(batch);
  std::vector<float> x(samples * static_cast<std::size_t>(layers.front()));
  std::vector<float> y(samples * static_cast<std::size_t>(layers.back()));
  data.batch(0, static_cast<int>(samples), x.data(), y.data());
  write_floats(dir / "x.f32", x);
  write_floats(dir / "y.f32", y);

  std::ofstream meta(dir / "meta.json", std::ios::trunc);
  meta << fmt::format("{{\"layers\": [{}], \"seed\": {}, \"batch\": {}, \"steps\": {}}}\n",
                      bench::join_list(layers), seed, batch, steps);
  if (!meta.flush()) throw std::runtime_error("cannot write " + (dir / "meta.json").string());
  return kExitPass;
}

}  // namespace chaosbench::harness
