// load_latest_checkpoint: candidates newest first, each verified down to its base full;
// the first good one wins. Reads only.
#include "bench/checkpoint/checkpoint_loader.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "common/files/safe_files.h"
#include "bench/checkpoint/checkpoint_format.h"
#include "bench/checkpoint/checkpoint_manifest.h"

namespace chaosbench::bench::train {
namespace {

struct Candidate {
  std::string file;
  std::int64_t step = 0;
  CheckpointKind kind = CheckpointKind::kFull;
  const ManifestEntry* entry = nullptr;  // null when found by scanning
};

// ckpt-<digits>.full / .delta, as checkpoint_file_name writes them; others are not ours.
std::optional<Candidate> candidate_from_name(const std::string& name) {
  for (CheckpointKind kind : {CheckpointKind::kFull, CheckpointKind::kDelta}) {
    const std::string suffix = std::string(".") + checkpoint_kind_name(kind);
    if (name.size() <= 5 + suffix.size() || name.rfind("ckpt-", 0) != 0 || !name.ends_with(suffix)) continue;
    const std::string digits = name.substr(5, name.size() - 5 - suffix.size());
    if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return Candidate{name, std::stoll(digits), kind, nullptr};
  }
  return std::nullopt;
}

std::vector<Candidate> scan_directory(const std::string& dir) {
  std::vector<Candidate> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (auto c = candidate_from_name(it->path().filename().string())) out.push_back(std::move(*c));
  }
  return out;
}

class Verifier {
 public:
  Verifier(std::string dir, std::string model_key, std::uint64_t buffer_elements,
           const std::optional<CheckpointManifest>& manifest)
      : dir_(std::move(dir)), model_key_(std::move(model_key)), buffer_elements_(buffer_elements), manifest_(manifest) {}

  // Verifies and decodes one candidate (and, for a delta, its base). "" or the reason.
  std::string load(const Candidate& c, CheckpointState* out) {
    if (c.kind == CheckpointKind::kFull) {
      auto& [state, reason] = full(c.step);
      if (state) *out = std::move(*state);  // the search ends with a good candidate
      return reason;
    }
    std::string bytes;
    CheckpointHeader header;
    if (std::string why = read_and_check(c, &bytes, &header); !why.empty()) return why;
    auto& [base, base_reason] = full(header.base_step);
    if (!base) {
      return fmt::format("base {} is bad: {}", checkpoint_file_name(header.base_step, CheckpointKind::kFull),
                         base_reason);
    }
    return decode_checkpoint(bytes, header, &*base, out);
  }

 private:
  // Reads the file and checks it against the manifest entry or its name, its header and
  // the model key; the payload is checked by decode_checkpoint.
  std::string read_and_check(const Candidate& c, std::string* bytes, CheckpointHeader* header) const {
    if (int err = common::read_regular(dir_ + "/" + c.file, *bytes, max_file_bytes(c)); err != 0)
      return err == ENOENT ? "missing"
             : err == EINVAL ? "not a regular file"
             : err == EFBIG  ? (c.entry ? fmt::format("size differs (more than the manifest's {} bytes)", c.entry->bytes)
                                        : std::string("larger than a checkpoint of this model can be"))
                             : std::strerror(err);
    if (c.entry) {
      if (bytes->size() < c.entry->bytes) return fmt::format("truncated ({} of {} bytes)", bytes->size(), c.entry->bytes);
      if (bytes->size() != c.entry->bytes)
        return fmt::format("size differs ({} bytes, the manifest says {})", bytes->size(), c.entry->bytes);
      if (checkpoint_xxh64(*bytes) != c.entry->xxh64) return "checksum mismatch";
    }
    if (std::string why = parse_checkpoint_header(*bytes, header); !why.empty()) return why;
    if (header->step != c.step || header->kind != c.kind ||
        (c.entry && header->base_step != c.entry->base_step))
      return c.entry ? "header disagrees with the manifest" : "header disagrees with the file name";
    if (header->model_key != model_key_) return fmt::format("model key differs (\"{}\")", header->model_key);
    if (header->buffers.size() > kMaxCheckpointBuffers)
      return fmt::format("{} buffers, more than any model has", header->buffers.size());
    for (const auto& [name, size] : header->buffers) {
      if (buffer_elements_ != 0 && size != buffer_elements_)
        return fmt::format("buffer of {} elements, the model has {}", size, buffer_elements_);
    }
    return "";
  }

  // What the file may weigh before it is read: the manifest's size, else what the
  // model's buffers can take compressed (zstd's worst case is below 1% over, plus a
  // header), else no limit.
  std::uint64_t max_file_bytes(const Candidate& c) const {
    const std::uint64_t model = buffer_elements_ == 0
                                    ? UINT64_MAX
                                    : (std::uint64_t{1} << 20) + 2 * 4 * buffer_elements_ * kMaxCheckpointBuffers;
    return c.entry ? std::min(c.entry->bytes, model) : model;
  }

  // The full checkpoint at `step`, decoded once however many deltas use it.
  std::pair<std::optional<CheckpointState>, std::string>& full(std::int64_t step) {
    auto [it, fresh] = fulls_.try_emplace(step);
    if (!fresh) return it->second;
    Candidate c{checkpoint_file_name(step, CheckpointKind::kFull), step, CheckpointKind::kFull, nullptr};
    if (manifest_) {
      auto e = std::find_if(manifest_->entries.begin(), manifest_->entries.end(),
                            [&](const ManifestEntry& m) { return m.step == step && m.kind == CheckpointKind::kFull; });
      if (e == manifest_->entries.end()) return it->second = {std::nullopt, "not in the manifest"};
      c.entry = &*e;
    }
    std::string bytes;
    CheckpointHeader header;
    std::string why = read_and_check(c, &bytes, &header);
    CheckpointState state;
    if (why.empty()) why = decode_checkpoint(bytes, header, nullptr, &state);
    if (why.empty()) it->second.first = std::move(state);
    it->second.second = std::move(why);
    return it->second;
  }

  std::string dir_;
  std::string model_key_;
  std::uint64_t buffer_elements_;
  const std::optional<CheckpointManifest>& manifest_;
  std::map<std::int64_t, std::pair<std::optional<CheckpointState>, std::string>> fulls_;
};

}  // namespace

std::optional<LoadResult> load_latest_checkpoint(const std::string& dir, const std::string& model_key,
                                                 std::vector<RejectedCheckpoint>* rejected, std::uint64_t buffer_elements,
                                                 std::optional<std::int64_t> max_step) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<RejectedCheckpoint> tried;
  std::optional<LoadResult> result;
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) {
      const std::optional<CheckpointManifest> manifest = read_manifest(dir);
      std::vector<Candidate> candidates;
      if (manifest) {
        for (const ManifestEntry& e : manifest->entries) candidates.push_back({e.file, e.step, e.kind, &e});
      } else {
        candidates = scan_directory(dir);
      }
      // Newest first; at one step (only possible without a manifest) the full first.
      std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        return a.step != b.step ? a.step > b.step : a.kind < b.kind;
      });
      Verifier verifier(dir, model_key, buffer_elements, manifest);
      for (const Candidate& c : candidates) {
        if (max_step && c.step > *max_step) continue;
        CheckpointState state;
        std::string why;
        try {
          why = verifier.load(c, &state);
        } catch (const std::exception& e) {
          why = e.what();  // out of memory on a huge (but well-formed) file
        }
        if (!why.empty()) {
          tried.push_back({c.file, c.step, std::move(why)});
          continue;
        }
        result.emplace();
        result->state = std::move(state);
        result->file = c.file;
        result->full = c.kind == CheckpointKind::kFull;
        break;
      }
    }
  } catch (const std::exception& e) {
    tried.push_back({dir, 0, fmt::format("cannot read the directory: {}", e.what())});
  }
  if (rejected) *rejected = tried;
  if (result) {
    result->rejected = std::move(tried);
    result->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return result;
}

}  // namespace chaosbench::bench::train
