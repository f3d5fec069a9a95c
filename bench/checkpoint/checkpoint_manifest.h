// manifest.json: the list of a checkpoint directory's files, written by CheckpointWriter
// after every file and read by the loader to pick candidates. Plain values and a codec:
//   {"version":1,"model_key":"mlp 256-1024-16 sgd","entries":[
//     {"file":"ckpt-000000100.full","step":100,"kind":"full","base_step":100,
//      "bytes":9437,"xxh64":"8f3a...16 hex digits"}, ...]}
// xxh64 is of the whole file, as a hex string because JSON numbers above 2^53 are not
// exact in most readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/checkpoint/checkpoint_format.h"

namespace chaosbench::bench::train {

inline constexpr char kManifestFile[] = "manifest.json";

struct ManifestEntry {
  std::string file;  // relative to the directory
  std::int64_t step = 0;
  CheckpointKind kind = CheckpointKind::kFull;
  std::int64_t base_step = 0;  // a full's own step
  std::uint64_t bytes = 0;
  std::uint64_t xxh64 = 0;
};

struct CheckpointManifest {
  std::string model_key;
  std::vector<ManifestEntry> entries;  // in the order written: ascending step
};

std::string manifest_to_json(const CheckpointManifest& manifest);

// dir/manifest.json, or nullopt with `why` ("missing", "not JSON: ...", ...) when it is
// absent or unusable: callers then fall back to the files' own headers. Never throws.
std::optional<CheckpointManifest> read_manifest(const std::string& dir, std::string* why = nullptr);

}  // namespace chaosbench::bench::train
