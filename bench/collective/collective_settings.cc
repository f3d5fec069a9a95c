#include "bench/collective/collective_settings.h"

#include "bench/common/settings_table.h"

namespace chaosbench::bench {
namespace {

using CollectiveRow = CollectiveSettings;

const SettingsTable<CollectiveRow>& collective_settings_table() {
  static const SettingsTable<CollectiveRow> table = [] {
    SettingsTable<CollectiveRow> t;
    t.add("collectives", &CollectiveRow::collectives, "comma-separated collectives")
        .add("algorithms", &CollectiveRow::algorithms, "comma-separated allreduce algorithms")
        .add("min-size", &CollectiveRow::min_size, "smallest message")
        .add("max-size", &CollectiveRow::max_size, "largest message")
        .add("factor", &CollectiveRow::factor, "size step factor")
        .add("warmup", &CollectiveRow::warmup_iters, "warm-up iterations per size")
        .add("iters", &CollectiveRow::iters, "timed iterations per size")
        .add("duration-ms", &CollectiveRow::duration, "repeat the sweep until this long has passed (0: once)", MillisCodec{true})
        .add("check", &CollectiveRow::check, "check results (0 or 1)")
        .add("timeout-ms", &CollectiveRow::timeout, "gloo operation timeout", MillisCodec{});
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> encode_collective_settings(const CollectiveSettings& s) { return collective_settings_table().encode(s); }

void add_collective_settings_flags(boost::program_options::options_description& options) {
  collective_settings_table().declare(options);
}

CollectiveSettings read_collective_settings(const boost::program_options::variables_map& vm) {
  return collective_settings_table().read(vm);
}

CollectiveSettings decode_collective_settings(const std::vector<std::string>& flags) {
  return decode_flags(flags, add_collective_settings_flags, read_collective_settings);
}

}  // namespace chaosbench::bench
