#include "harness/core/run_stamps.h"

#include <ctime>

#include "common/files/safe_files.h"

namespace chaosbench::harness {
namespace {

std::string utc_format(const char* format) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), format, &tm);
  return buf;
}

}  // namespace

std::string utc_timestamp_iso() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }

std::string utc_timestamp_compact() { return utc_format("%Y%m%dT%H%M%SZ"); }

std::string make_run_id() { return common::random_hex(12); }

}  // namespace chaosbench::harness
