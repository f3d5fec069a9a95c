#include "harness/doctor/blas_choice.h"
#include "harness/doctor/cpu_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/blas/blas_probe.h"
#include "common/json/json_limits.h"
#include "common/files/safe_files.h"
#include "bench/blas/cpu_peak.h"
#include "common/kernel/netns.h"
#include "harness/core/host_error.h"
#include "harness/core/run_stamps.h"
#include "reports/model/blas_json.h"

extern char** environ;

namespace chaosbench::harness {
namespace {

constexpr int kCacheFormat = 1;
constexpr auto kProbeLimit = std::chrono::seconds(30);
// The library's own choice is kept when it is this close to the fastest: a few percent
// is the noise between two probes, and the kernel the library picked itself is the one
// its authors tested on the CPU it recognised.
constexpr double kKeepDetected = 0.97;

std::string fingerprint(const CpuIdentity& c) {
  return fmt::format("chaosbench {}|{}|{}|{}|{}|{}|{}|{}", CHAOSBENCH_VERSION, c.vendor, c.family, c.model, c.stepping,
                     c.name, c.flags_line, bench::blas::blas_library_identity());
}

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// This process's environment without the variables that steer OpenBLAS, plus `coretype`.
std::vector<std::string> probe_environment(const std::string& coretype) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("OPENBLAS_CORETYPE=", 0) == 0 || kv.rfind("OPENBLAS_VERBOSE=", 0) == 0) continue;
    env.push_back(kv);
  }
  if (!coretype.empty()) env.push_back("OPENBLAS_CORETYPE=" + coretype);
  return env;
}

// One subprocess: the kernel `name` ("" for the library's own choice) measured.
reports::BlasCandidateRecord probe_one(const std::string& self_exe, const std::string& name, reports::BlasRecord& out) {
  reports::BlasCandidateRecord c;
  c.name = name;
  const std::vector<std::string> argv{self_exe, "worker", "blas-probe"};
  const auto env = probe_environment(name);
  common::CommandOutput r;
  try {
    r = common::run_in_netns(-1, argv, kProbeLimit, &env);
  } catch (const std::exception& e) {
    c.problem = fmt::format("could not start the probe: {}", e.what());
    return c;
  }
  if (r.timed_out) {
    c.problem = fmt::format("the probe took longer than {} s", kProbeLimit.count());
    return c;
  }
  std::string last;  // the JSON line: the last one that is not empty
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  const auto j = common::parse_json_bounded(last);
  if (r.exit_code != 0 || !j.is_object()) {
    std::string err = r.err.substr(0, r.err.find('\n'));
    c.problem = r.exit_code < 0 ? "the probe crashed (killed by a signal: an instruction this CPU lacks?)"
                                : fmt::format("the probe failed (exit {}){}", r.exit_code, err.empty() ? "" : ": " + err);
    return c;
  }
  // Only fields of the right type count, whatever the line holds.
  const auto error = j.find("max_error");
  const bool has_error = error != j.end() && error->is_number();  // null: not finite
  c = reports::blas_candidate_from_json(j);
  c.name = name;
  c.problem.clear();
  if (!has_error) c.max_error = std::numeric_limits<double>::infinity();
  if (const auto config = j.find("config"); out.library.empty() && config != j.end() && config->is_string())
    out.library = config->get<std::string>();
  if (c.corename.empty()) c.problem = "the probe printed no kernel name";
  else if (!name.empty() && !same_name(c.corename, name))
    c.problem = fmt::format("not in this build of the library (it ran {})", c.corename);
  else if (!c.correct)
    c.problem = fmt::format("wrong results (error {:.3g}, at most {:.0e} allowed)", c.max_error, bench::blas::kMaxError);
  return c;
}

// Measured in this process, not in a probe: no BLAS is involved, and a probe that crashes
// loses nothing of it.
reports::CpuPeakRecord cpu_peak_here() {
  const auto p = bench::blas::measure_cpu_peak();
  return {p.known, p.isa, p.lanes, p.fma_units, p.clock_ghz, p.nominal_ghz, p.fma_gflops, p.peak_gflops};
}

reports::BlasRecord probe_all(const std::string& self_exe, const CpuIdentity& cpu) {
  reports::BlasRecord b;
  b.probed_at = utc_timestamp_iso();
  b.candidates.push_back(probe_one(self_exe, "", b));
  const std::string detected = b.candidates.front().corename;
  for (const auto& name : blas_candidates(cpu.flags, cpu.vendor)) {
    if (same_name(name, detected)) continue;  // measured above
    b.candidates.push_back(probe_one(self_exe, name, b));
  }
  b.cpu = cpu_peak_here();
  return b;
}

// Only a directory (not a link) of this user's that nobody else may write, and a file of
// the same kind, are trusted: the cache decides which kernel every worker runs, and
// whether its results were right.
bool private_to_us(const std::string& path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  return (directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::optional<reports::BlasRecord> read_cache(const std::string& dir, const std::string& path, const std::string& key) {
  if (!private_to_us(dir, true) || !private_to_us(path, false)) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1 << 20)) return std::nullopt;
  const auto j = common::parse_json_bounded(text.str());
  if (!j.is_object()) return std::nullopt;
  const auto format = j.find("format"), fingerprint = j.find("fingerprint"), blas = j.find("blas");
  if (format == j.end() || !format->is_number_integer() || format->get<int>() != kCacheFormat ||
      fingerprint == j.end() || !fingerprint->is_string() || fingerprint->get<std::string>() != key ||
      blas == j.end() || !blas->is_object())
    return std::nullopt;
  auto b = reports::blas_from_json(*blas);
  if (b.candidates.empty()) return std::nullopt;
  return b;
}

// Worth keeping for the next run: some kernel was measured, none timed out (a busy
// machine), and no kernel ran faster than the CPU's measured peak (a disturbed peak).
bool worth_caching(const reports::BlasRecord& b) {
  double best = 0;
  bool measured = false;
  for (const auto& c : b.candidates) {
    if (c.problem.find("longer than") != std::string::npos) return false;
    measured = measured || !c.corename.empty();
    if (c.problem.empty()) best = std::max(best, c.gflops);
  }
  return measured && b.cpu.known && best <= 1.15 * b.cpu.peak_gflops;
}

// Best effort: a host where the cache cannot be written probes again next time.
void write_cache(const std::string& dir, const std::string& path, const std::string& key,
                 const reports::BlasRecord& b) {
  try {
    std::filesystem::create_directories(dir);
    if (!private_to_us(dir, true)) return;
    nlohmann::ordered_json j;
    j["format"] = kCacheFormat;
    j["fingerprint"] = key;
    j["blas"] = reports::blas_json(b);
    common::write_file_atomically(path, j.dump(2) + "\n", 0600);
  } catch (const std::exception&) {
  }
}

}  // namespace

void decide_blas(BlasChoice& b, const BlasChoiceOptions& o) {
  if (b.candidates.empty()) {
    b.source = "unavailable";
    b.reason = "the probe did not run";
    return;
  }
  const auto& own = b.candidates.front();
  b.detected = own.corename;
  b.detected_gflops = own.gflops;
  const reports::BlasCandidateRecord* best = nullptr;
  int usable = 0;
  for (const auto& c : b.candidates) {
    if (!c.problem.empty() || c.corename.empty()) continue;
    ++usable;
    if (!best || c.gflops > best->gflops) best = &c;
  }
  if (best) {
    b.best = best->corename;
    b.best_gflops = best->gflops;
  }
  if (!o.user_coretype.empty()) {
    b.chosen = o.user_coretype;
    b.source = o.user_source;
    for (const auto& c : b.candidates)
      if (c.problem.empty() && same_name(c.corename, o.user_coretype)) b.chosen_gflops = c.gflops;
    b.reason = fmt::format("OPENBLAS_CORETYPE={} is set ({}), and is kept", o.user_coretype, o.user_source);
    if (best) b.reason += fmt::format("; the fastest correct kernel here is {} at {:.1f} GFLOP/s", best->corename, best->gflops);
    return;
  }
  if (!best) {
    b.source = "unavailable";
    b.reason = "no kernel passed the probe; the workers keep the library's own choice";
    return;
  }
  const bool own_ok = own.problem.empty() && !own.corename.empty();
  const auto& pick = own_ok && own.gflops >= kKeepDetected * best->gflops ? own : *best;
  b.chosen = pick.corename;
  b.chosen_gflops = pick.gflops;
  if (&pick == &own) {
    b.reason = fmt::format("the library's own choice is the fastest correct of {} kernels tried (within {:.0f}%)", usable,
                           (1 - kKeepDetected) * 100);
  } else if (!own_ok) {
    b.reason = fmt::format("the library's own choice, {}, is unusable ({}); {} is the fastest correct of {} kernels tried",
                           own.corename.empty() ? "unknown" : own.corename, own.problem, pick.corename, usable);
  } else {
    const double ratio = pick.gflops / std::max(own.gflops, 1e-9);
    b.reason = fmt::format("the fastest correct of {} kernels tried; the library's own choice, {}, is {}", usable,
                           own.corename,
                           ratio >= 1.5 ? fmt::format("{:.1f}x slower", ratio)
                                        : fmt::format("{:.0f}% slower", (1 - 1 / ratio) * 100));
  }
}

std::vector<std::string> blas_candidates(const std::set<std::string>& flags, const std::string& vendor) {
  std::vector<std::string> out;
  if (!flags.count("sse2")) return out;  // not x86-64
  const auto has = [&](std::initializer_list<const char*> names) {
    return std::all_of(names.begin(), names.end(), [&](const char* f) { return flags.count(f) > 0; });
  };
  if (has({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})) {
    if (has({"avx512_bf16", "amx_tile", "avx512_fp16"})) out.push_back("SapphireRapids");
    if (has({"avx512_bf16"})) out.push_back("Cooperlake");
    out.push_back("SkylakeX");
  }
  if (has({"avx2", "fma"})) {
    if (vendor == "AuthenticAMD" || vendor == "HygonGenuine") out.push_back("Zen");
    out.push_back("Haswell");
  }
  if (has({"avx"})) out.push_back("Sandybridge");
  if (out.empty() && has({"sse4_2"})) out.push_back("Nehalem");
  if (out.empty() && has({"pni"})) out.push_back("Prescott");
  return out;
}

std::string default_blas_cache_dir() {
  if (const char* dir = std::getenv("CHAOSBENCH_CACHE_DIR"); dir && *dir) return dir;
  if (::geteuid() == 0) return "/var/cache/chaosbench";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/chaosbench";
  if (const char* home = std::getenv("HOME"); home && *home == '/') return std::string(home) + "/.cache/chaosbench";
  return "";
}

BlasChoice choose_blas(const BlasChoiceOptions& o) {
  const auto cpu = read_cpuinfo();
  const std::string key = fingerprint(cpu);
  const std::string dir = o.cache_dir.empty() ? default_blas_cache_dir() : o.cache_dir;
  const std::string path = dir.empty() ? "" : dir + "/blas-probe.json";
  std::optional<reports::BlasRecord> cached;
  if (o.use_cache && !path.empty()) cached = read_cache(dir, path, key);
  reports::BlasRecord b;
  if (cached) {
    b = *cached;
    b.source = "cache";
  } else if (!o.user_coretype.empty() && !o.probe_anyway) {
    // The user chose: nothing to decide, so no probe (seconds on a host's first run).
    b.cpu = cpu_peak_here();
    b.probed_at = utc_timestamp_iso();
    b.chosen = o.user_coretype;
    b.source = o.user_source;
    b.reason = fmt::format("OPENBLAS_CORETYPE={} is set ({}), and is kept; no probe ran (chaosbench doctor "
                           "--reprobe-blas measures every kernel)",
                           o.user_coretype, o.user_source);
    return b;
  } else {
    std::string exe = o.self_exe;
    if (exe.empty()) {
      std::error_code ec;
      exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    }
    b = probe_all(exe, cpu);
    b.source = "probe";
    if (!path.empty() && worth_caching(b)) write_cache(dir, path, key, b);
  }
  decide_blas(b, o);
  return b;
}

std::string describe(const BlasChoice& b) {
  if (b.candidates.empty()) return "BLAS: " + b.reason;  // the user's kernel, not probed
  std::string out = fmt::format("BLAS: detected {} ({:.1f} GFLOP/s)", b.detected.empty() ? "?" : b.detected,
                                b.detected_gflops);
  if (!b.chosen.empty()) out += fmt::format("; workers get {} ({:.1f} GFLOP/s, {})", b.chosen, b.chosen_gflops, b.source);
  if (!b.reason.empty()) out += ": " + b.reason;
  return out;
}

}  // namespace chaosbench::harness
