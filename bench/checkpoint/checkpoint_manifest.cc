// The manifest.json codec; see checkpoint_manifest.h.
#include "bench/checkpoint/checkpoint_manifest.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/files/safe_files.h"
#include "common/json/json_limits.h"

namespace chaosbench::bench::train {
namespace {

// Far above what retention keeps (a few hundred bytes per entry).
constexpr std::size_t kMaxManifestBytes = 16 << 20;

}  // namespace

std::string manifest_to_json(const CheckpointManifest& manifest) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ManifestEntry& e : manifest.entries) {
    entries.push_back({{"file", e.file},
                       {"step", e.step},
                       {"kind", checkpoint_kind_name(e.kind)},
                       {"base_step", e.base_step},
                       {"bytes", e.bytes},
                       {"xxh64", fmt::format("{:016x}", e.xxh64)}});
  }
  nlohmann::json j = {{"version", 1}, {"model_key", manifest.model_key}, {"entries", std::move(entries)}};
  return j.dump(1) + "\n";
}

std::optional<CheckpointManifest> read_manifest(const std::string& dir, std::string* why) {
  auto fail = [why](std::string reason) -> std::optional<CheckpointManifest> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::string text;
  if (int err = common::read_regular(dir + "/" + kManifestFile, text, kMaxManifestBytes); err != 0)
    return fail(err == ENOENT ? "missing" : std::strerror(err));
  try {
    if (text.size() > kMaxManifestBytes) return fail("larger than a manifest can be");
    std::string bad;
    nlohmann::json j = common::parse_json_bounded(text, &bad);
    if (j.is_discarded()) return fail(bad);
    if (j.at("version").get<int>() != 1) return fail("unknown version");
    CheckpointManifest m;
    m.model_key = j.at("model_key").get<std::string>();
    for (const nlohmann::json& e : j.at("entries")) {
      ManifestEntry entry;
      entry.file = e.at("file").get<std::string>();
      entry.step = e.at("step").get<std::int64_t>();
      auto kind = parse_checkpoint_kind(e.at("kind").get<std::string>());
      if (!kind) return fail("unknown kind");
      entry.kind = *kind;
      entry.base_step = e.at("base_step").get<std::int64_t>();
      entry.bytes = e.at("bytes").get<std::uint64_t>();
      entry.xxh64 = std::stoull(e.at("xxh64").get<std::string>(), nullptr, 16);
      // Only our own names: a damaged manifest must not point the loader or the
      // writer's deletions outside the directory.
      if (entry.file != checkpoint_file_name(entry.step, entry.kind)) return fail("bad file name");
      m.entries.push_back(std::move(entry));
    }
    return m;
  } catch (const std::exception& e) {
    return fail(fmt::format("unreadable: {}", e.what()));
  }
}

}  // namespace chaosbench::bench::train
