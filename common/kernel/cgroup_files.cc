#include "common/kernel/cgroup_files.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

namespace chaosbench::common {
namespace {

struct KnobNames {
  CgroupKnob knob;
  std::string_view v1_file, v2_file, v1_backend, v2_backend;
};

constexpr std::array kKnobs{
    KnobNames{CgroupKnob::kFreeze, "freezer.state", "cgroup.freeze", "freezer cgroup", "freezer cgroup (v2 cgroup.freeze)"},
    KnobNames{CgroupKnob::kFreezeState, "freezer.state", "cgroup.events", "", ""},
    KnobNames{CgroupKnob::kCpuQuota, "cpu.cfs_quota_us", "cpu.max", "cpu cgroup (CFS quota)", "cpu cgroup (v2 cpu.max)"},
    KnobNames{CgroupKnob::kMemoryLimit, "memory.limit_in_bytes", "memory.max", "memory cgroup", "memory cgroup (v2 memory.max)"},
    KnobNames{CgroupKnob::kOomEvents, "memory.oom_control", "memory.events", "", ""},
};

const KnobNames& names(CgroupKnob knob) {
  return *std::find_if(kKnobs.begin(), kKnobs.end(), [knob](const auto& k) { return k.knob == knob; });
}

// The value on the line "KEY VALUE" of a flat keyed file (cgroup.events, memory.events).
std::optional<long long> keyed_value(std::string_view text, std::string_view key) {
  std::istringstream in{std::string(text)};
  std::string k;
  long long v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace

std::string_view cgroup_file(int version, CgroupKnob knob) {
  return version == 2 ? names(knob).v2_file : names(knob).v1_file;
}

std::string_view cgroup_backend(int version, CgroupKnob knob) {
  return version == 2 ? names(knob).v2_backend : names(knob).v1_backend;
}

std::string_view freeze_value(int version, bool frozen) {
  if (version == 2) return frozen ? "1" : "0";
  return frozen ? "FROZEN" : "THAWED";
}

bool freeze_requested(int version, std::string_view freeze_text) {
  if (version == 2) return freeze_text.starts_with("1");
  return !freeze_text.starts_with("THAWED");
}

bool freeze_done(int version, std::string_view state_text) {
  if (version == 2) return keyed_value(state_text, "frozen") == 1;
  return state_text == "FROZEN";
}

long long cpu_quota_us(double cpus, long long period_us) {
  return std::max<long long>(1000, std::llround(cpus * static_cast<double>(period_us)));
}

std::string cpu_max_value(double cpus, std::string_view current_cpu_max) {
  std::istringstream in{std::string(current_cpu_max)};
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || period <= 0) period = 100000;
  return std::to_string(cpu_quota_us(cpus, period)) + " " + std::to_string(period);
}

std::optional<long long> oom_kill_count(std::string_view events_text) { return keyed_value(events_text, "oom_kill"); }

}  // namespace chaosbench::common
