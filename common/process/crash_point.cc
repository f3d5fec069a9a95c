#include "common/process/crash_point.h"

#include <csignal>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

namespace chaosbench::common {
namespace {

struct CrashSetting {
  std::string point;  // empty: no crash asked for
  std::string role;   // empty: any process
};

CrashSetting& crash_setting() {
  static CrashSetting setting = [] {
    CrashSetting s;
    const char* v = std::getenv("CHAOSBENCH_CRASH_AT");
    if (v == nullptr) return s;
    const std::string text(v);
    const auto at = text.find('@');
    s.point = text.substr(0, at);
    if (at != std::string::npos) s.role = text.substr(at + 1);
    return s;
  }();
  return setting;
}

std::mutex& crash_role_mutex() {
  static std::mutex m;
  return m;
}

std::string& crash_role() {
  static std::string role;
  return role;
}

}  // namespace

void set_crash_role(std::string role) {
  std::lock_guard lock(crash_role_mutex());
  crash_role() = std::move(role);
}

bool crash_point_armed(std::string_view point) {
  const CrashSetting& s = crash_setting();
  if (s.point.empty() || s.point != point) return false;
  std::lock_guard lock(crash_role_mutex());
  return s.role == crash_role();
}

void crash_point(std::string_view point) {
  if (!crash_point_armed(point)) return;
  ::kill(::getpid(), SIGKILL);
  ::_exit(137);  // not reached: SIGKILL cannot be caught
}

}  // namespace chaosbench::common
