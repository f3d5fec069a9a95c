#include "harness/runner/timeline_log.h"

#include "common/safe_files.h"

#include <cerrno>
#include <unistd.h>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

namespace chaosbench::harness {

TimelineLog::TimelineLog(const std::string& path) {
  // A fresh file, never one reached through a link planted in the output directory.
  const int fd = common::create_file_fresh(path.c_str());
  if (fd >= 0) file_ = ::fdopen(fd, "w");
  if (!file_) {
    const int err = fd < 0 ? -fd : errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(fmt::format("cannot create {}: {}", path, std::strerror(err)));
  }
}

TimelineLog::~TimelineLog() {
  if (file_) std::fclose(file_);
}

void TimelineLog::write(double t_s, std::string_view event, const std::vector<TimelineField>& fields) {
  std::string line = fmt::format("{{\"t\":{},\"event\":{}", num(t_s), str(event));
  for (const auto& [k, v] : fields) line += fmt::format(",{}:{}", str(k), v);
  line += "}\n";
  std::lock_guard lock(mutex_);
  if (!file_) return;
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

std::string TimelineLog::str(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  out += '"';
  return out;
}

std::string TimelineLog::num(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);  // shortest form that reads back exactly
}

std::string TimelineLog::value(const bench::LabelValue& v) {
  if (const auto* text = std::get_if<std::string>(&v)) return str(*text);
  return bench::label_to_string(v);
}

}  // namespace chaosbench::harness
