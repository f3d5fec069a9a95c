#include "harness/collect/timeline_log.h"

#include "common/files/safe_files.h"

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
  std::string line = fmt::format("{{\"t\":{},\"event\":{}", encode(t_s), encode(std::string(event)));
  for (const auto& [k, v] : fields) line += fmt::format(",{}:{}", encode(k), encode(v));
  line += "}\n";
  std::lock_guard lock(mutex_);
  if (!file_) return;
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

namespace {

std::string quoted(std::string_view s) {
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

}  // namespace

std::string TimelineLog::encode(const TimelineValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return quoted(*s);
  if (const auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) return "null";
    return fmt::format("{}", *d);  // shortest form that reads back exactly
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    std::string out = "[";
    for (const auto& item : *list) {
      if (out.size() > 1) out += ',';
      out += quoted(item);
    }
    out += ']';
    return out;
  }
  return "null";
}

TimelineValue TimelineLog::value(const bench::LabelValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  return std::get<double>(v);
}

}  // namespace chaosbench::harness
