// The on-disk format of one checkpoint file, shared by CheckpointWriter and the loader so
// the format lives in one place. Pure: bytes in, bytes out; no files, no clocks.
//
// A file is a header, then the payload. All integers little-endian.
//   offset  size  field
//        0     8  magic "CBCKPT1\0"
//        8     4  format version (1)
//       12     4  header_bytes: the header's length, checksum included (payload starts here)
//       16     4  kind: 1 full, 2 delta
//       20     4  buffer count
//       24     8  step (int64)
//       32     8  base_step (int64): the full a delta is XORed with; a full's own step
//       40     8  raw bytes: 4 x total elements, the payload decompressed
//       48     8  payload bytes (compressed)
//       56     8  xxh64 (seed 0) of the payload
//       64     4  model key length, then the key
//          then per buffer: 4 name length, the name, 8 element count
//          last  8  xxh64 (seed 0) of every header byte before it
// The payload is one zstd frame of the buffers' float bits, concatenated in table order
// (for a delta each word XORed with the base full's word at the same place), byte-plane
// shuffled: the low bytes of all words, then all second bytes, ... then all high bytes. The
// sign/exponent planes are nearly constant, and in a delta unchanged words are all-zero
// in every plane, which is what makes zstd at level 1 pay off.
// XXH64 rather than XXH3: it is what `xxh64sum` prints, so a file can be checked by hand
// against manifest.json, and at several GB/s it is far from the bottleneck next to zstd.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/checkpoint/checkpoint_state.h"

namespace chaosbench::bench::train {

enum class CheckpointKind : std::uint32_t { kFull = 1, kDelta = 2 };

inline constexpr std::uint32_t kCheckpointFormatVersion = 1;

// "full" / "delta": the file suffix and the manifest's "kind".
const char* checkpoint_kind_name(CheckpointKind kind);
std::optional<CheckpointKind> parse_checkpoint_kind(std::string_view name);
// "ckpt-000000150.delta": the step zero-padded to 9 digits so names sort by step.
std::string checkpoint_file_name(std::int64_t step, CheckpointKind kind);

struct CheckpointHeader {
  CheckpointKind kind = CheckpointKind::kFull;
  std::int64_t step = 0;
  std::int64_t base_step = 0;
  std::string model_key;
  std::vector<std::pair<std::string, std::uint64_t>> buffers;  // name, element count
  std::uint64_t raw_bytes = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t payload_xxh64 = 0;
  std::uint32_t header_bytes = 0;
};

// The whole file for `state`. A full when `base` is null; otherwise a delta against
// `base`, which must have the same buffer table (same_buffer_layout) and is recorded as
// base_step. Throws std::runtime_error when zstd fails.
std::string encode_checkpoint(const CheckpointState& state, const CheckpointState* base, int zstd_level);

// True when both states have the same buffer names and sizes in the same order.
bool same_buffer_layout(const CheckpointState& a, const CheckpointState& b);

// Parses and verifies the header at the start of `file` (magic, version, bounds, header
// checksum). Returns "" and fills `out`, or the reason the header is bad. Never throws.
std::string parse_checkpoint_header(std::string_view file, CheckpointHeader* out);

// Verifies the payload against a parsed header (length, xxh64) and decodes it into `out`.
// A delta needs its decoded base full, whose buffer table must match the header's.
// Returns "" or the reason, e.g. "truncated (812 of 9437 bytes)", "checksum mismatch".
// Never throws (allocation failures become a reason).
std::string decode_checkpoint(std::string_view file, const CheckpointHeader& header, const CheckpointState* base,
                              CheckpointState* out);

// xxh64 (seed 0) of a whole file: what manifest.json records.
std::uint64_t checkpoint_xxh64(std::string_view bytes);

}  // namespace chaosbench::bench::train
