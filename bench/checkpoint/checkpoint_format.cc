// Encoding and decoding of one checkpoint file; the layout is in checkpoint_format.h.
#include "bench/checkpoint/checkpoint_format.h"

#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include <fmt/format.h>
#include <xxhash.h>
#include <zstd.h>

namespace chaosbench::bench::train {
namespace {

constexpr char kMagic[8] = {'C', 'B', 'C', 'K', 'P', 'T', '1', '\0'};
constexpr std::size_t kFixedBytes = 64;  // up to the model key's length
constexpr std::size_t kChecksumBytes = 8;
// A real header is a few hundred bytes; the bound keeps a damaged length from reading far.
constexpr std::uint32_t kMaxHeaderBytes = 1u << 20;

void put_u32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// Reads the variable part of a header without ever stepping past `end`.
class Cursor {
 public:
  Cursor(const char* p, const char* end) : p_(p), end_(end) {}
  bool u32(std::uint32_t* v) { return take(4, [&](const char* q) { *v = get_u32(q); }); }
  bool u64(std::uint64_t* v) { return take(8, [&](const char* q) { *v = get_u64(q); }); }
  bool str(std::string* s) {
    std::uint32_t n = 0;
    return u32(&n) && take(n, [&](const char* q) { s->assign(q, n); });
  }
  bool at_end() const { return p_ == end_; }

 private:
  template <typename F>
  bool take(std::size_t n, F f) {
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    f(p_);
    p_ += n;
    return true;
  }
  const char* p_;
  const char* end_;
};

std::uint64_t total_elements(const CheckpointState& s) {
  std::uint64_t n = 0;
  for (const auto& [name, values] : s.buffers) n += values.size();
  return n;
}

// Word i of the concatenated buffers (XORed with `base`'s) goes to byte i of each of the
// four planes; plane b holds bits 8b..8b+7, whatever the host's byte order.
void shuffle_words(const CheckpointState& state, const CheckpointState* base, unsigned char* out, std::uint64_t n) {
  std::uint64_t i = 0;
  for (std::size_t k = 0; k < state.buffers.size(); ++k) {
    const std::vector<float>& values = state.buffers[k].second;
    const float* b = base ? base->buffers[k].second.data() : nullptr;
    for (std::size_t j = 0; j < values.size(); ++j, ++i) {
      std::uint32_t w;
      std::memcpy(&w, &values[j], 4);
      if (b) {
        std::uint32_t v;
        std::memcpy(&v, &b[j], 4);
        w ^= v;
      }
      out[i] = static_cast<unsigned char>(w);
      out[n + i] = static_cast<unsigned char>(w >> 8);
      out[2 * n + i] = static_cast<unsigned char>(w >> 16);
      out[3 * n + i] = static_cast<unsigned char>(w >> 24);
    }
  }
}

// The inverse of shuffle_words, into `out`'s buffers (already sized).
void unshuffle_words(const unsigned char* in, std::uint64_t n, const CheckpointState* base, CheckpointState* out) {
  std::uint64_t i = 0;
  for (std::size_t k = 0; k < out->buffers.size(); ++k) {
    std::vector<float>& values = out->buffers[k].second;
    const float* b = base ? base->buffers[k].second.data() : nullptr;
    for (std::size_t j = 0; j < values.size(); ++j, ++i) {
      std::uint32_t w = std::uint32_t{in[i]} | std::uint32_t{in[n + i]} << 8 | std::uint32_t{in[2 * n + i]} << 16 |
                        std::uint32_t{in[3 * n + i]} << 24;
      if (b) {
        std::uint32_t v;
        std::memcpy(&v, &b[j], 4);
        w ^= v;
      }
      std::memcpy(&values[j], &w, 4);
    }
  }
}

}  // namespace

const char* checkpoint_kind_name(CheckpointKind kind) { return kind == CheckpointKind::kFull ? "full" : "delta"; }

std::optional<CheckpointKind> parse_checkpoint_kind(std::string_view name) {
  if (name == "full") return CheckpointKind::kFull;
  if (name == "delta") return CheckpointKind::kDelta;
  return std::nullopt;
}

std::string checkpoint_file_name(std::int64_t step, CheckpointKind kind) {
  return fmt::format("ckpt-{:09d}.{}", step, checkpoint_kind_name(kind));
}

bool same_buffer_layout(const CheckpointState& a, const CheckpointState& b) {
  if (a.buffers.size() != b.buffers.size()) return false;
  for (std::size_t k = 0; k < a.buffers.size(); ++k) {
    if (a.buffers[k].first != b.buffers[k].first || a.buffers[k].second.size() != b.buffers[k].second.size())
      return false;
  }
  return true;
}

std::string encode_checkpoint(const CheckpointState& state, const CheckpointState* base, int zstd_level) {
  std::size_t header_bytes = kFixedBytes + 4 + state.model_key.size() + kChecksumBytes;
  for (const auto& [name, values] : state.buffers) header_bytes += 4 + name.size() + 8;
  const std::uint64_t n = total_elements(state);
  const std::uint64_t raw_bytes = 4 * n;

  std::vector<unsigned char> shuffled(raw_bytes);
  shuffle_words(state, base, shuffled.data(), n);

  // Compress straight into the file image behind the header, then fill the header in.
  std::string file(header_bytes + ZSTD_compressBound(raw_bytes), '\0');
  std::size_t csize = ZSTD_compress(file.data() + header_bytes, file.size() - header_bytes, shuffled.data(),
                                    raw_bytes, zstd_level);
  if (ZSTD_isError(csize)) throw std::runtime_error(fmt::format("zstd: {}", ZSTD_getErrorName(csize)));
  file.resize(header_bytes + csize);

  char* h = file.data();
  std::memcpy(h, kMagic, 8);
  put_u32(h + 8, kCheckpointFormatVersion);
  put_u32(h + 12, static_cast<std::uint32_t>(header_bytes));
  put_u32(h + 16, static_cast<std::uint32_t>(base ? CheckpointKind::kDelta : CheckpointKind::kFull));
  put_u32(h + 20, static_cast<std::uint32_t>(state.buffers.size()));
  put_u64(h + 24, static_cast<std::uint64_t>(state.step));
  put_u64(h + 32, static_cast<std::uint64_t>(base ? base->step : state.step));
  put_u64(h + 40, raw_bytes);
  put_u64(h + 48, csize);
  put_u64(h + 56, XXH64(file.data() + header_bytes, csize, 0));
  char* p = h + kFixedBytes;
  auto put_str = [&p](const std::string& s) {
    put_u32(p, static_cast<std::uint32_t>(s.size()));
    std::memcpy(p + 4, s.data(), s.size());
    p += 4 + s.size();
  };
  put_str(state.model_key);
  for (const auto& [name, values] : state.buffers) {
    put_str(name);
    put_u64(p, values.size());
    p += 8;
  }
  put_u64(p, XXH64(h, header_bytes - kChecksumBytes, 0));
  return file;
}

// 128 KiB out of every 4 bytes in: the most any zstd frame can expand.
constexpr std::uint64_t kMaxZstdRatio = (128 * 1024) / 4;

std::string parse_checkpoint_header(std::string_view file, CheckpointHeader* out) {
  if (file.size() < kFixedBytes) return fmt::format("truncated ({} bytes, shorter than a header)", file.size());
  const char* h = file.data();
  if (std::memcmp(h, kMagic, 8) != 0) return "not a checkpoint (bad magic)";
  std::uint32_t version = get_u32(h + 8);
  if (version != kCheckpointFormatVersion) return fmt::format("format version {} not supported", version);
  std::uint32_t header_bytes = get_u32(h + 12);
  if (header_bytes < kFixedBytes + 4 + kChecksumBytes || header_bytes > kMaxHeaderBytes)
    return fmt::format("bad header length {}", header_bytes);
  if (header_bytes > file.size()) return fmt::format("truncated ({} of at least {} bytes)", file.size(), header_bytes);
  if (XXH64(h, header_bytes - kChecksumBytes, 0) != get_u64(h + header_bytes - kChecksumBytes))
    return "header checksum mismatch";

  CheckpointHeader r;
  std::uint32_t kind = get_u32(h + 16);
  if (kind != 1 && kind != 2) return fmt::format("bad kind {}", kind);
  r.kind = static_cast<CheckpointKind>(kind);
  std::uint32_t count = get_u32(h + 20);
  r.step = static_cast<std::int64_t>(get_u64(h + 24));
  r.base_step = static_cast<std::int64_t>(get_u64(h + 32));
  r.raw_bytes = get_u64(h + 40);
  r.payload_bytes = get_u64(h + 48);
  r.payload_xxh64 = get_u64(h + 56);
  r.header_bytes = header_bytes;

  // A header with a good checksum was written by us; these checks catch a writer bug, not
  // damage, so their wording is plain.
  Cursor c(h + kFixedBytes, h + header_bytes - kChecksumBytes);
  if (!c.str(&r.model_key)) return "bad header layout";
  std::uint64_t elements = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    std::string name;
    std::uint64_t size = 0;
    if (!c.str(&name) || !c.u64(&size)) return "bad header layout";
    if (size > std::numeric_limits<std::uint64_t>::max() / 4 - elements) return "bad header: buffer sizes";
    elements += size;
    r.buffers.emplace_back(std::move(name), size);
  }
  if (!c.at_end()) return "bad header layout";
  if (r.raw_bytes != 4 * elements) return "bad header: raw size disagrees with the buffer table";
  if (r.kind == CheckpointKind::kFull && r.base_step != r.step) return "bad header: a full with a base";
  if (r.kind == CheckpointKind::kDelta && r.base_step >= r.step) return "bad header: a delta not after its base";
  *out = std::move(r);
  return "";
}

std::string decode_checkpoint(std::string_view file, const CheckpointHeader& header, const CheckpointState* base,
                              CheckpointState* out) {
  const std::uint64_t expected = std::uint64_t{header.header_bytes} + header.payload_bytes;
  if (file.size() < expected) return fmt::format("truncated ({} of {} bytes)", file.size(), expected);
  if (file.size() > expected) return fmt::format("{} bytes after the payload", file.size() - expected);
  const char* payload = file.data() + header.header_bytes;
  if (XXH64(payload, header.payload_bytes, 0) != header.payload_xxh64) return "checksum mismatch";

  unsigned long long content = ZSTD_getFrameContentSize(payload, header.payload_bytes);
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN) return "payload is not a zstd frame";
  if (content != header.raw_bytes)
    return fmt::format("payload decompresses to {} bytes, expected {}", content, header.raw_bytes);
  // Nothing is allocated for a size the payload cannot produce: the densest zstd block
  // (RFC 8878 3.1.1.2: an RLE block, a 3-byte header and 1 byte) yields at most 128 KiB.
  if (header.raw_bytes / kMaxZstdRatio > header.payload_bytes)
    return fmt::format("payload of {} bytes cannot decompress to {} bytes", header.payload_bytes, header.raw_bytes);

  if (header.kind == CheckpointKind::kDelta) {
    if (!base) return "delta without its base";
    bool same = base->buffers.size() == header.buffers.size();
    for (std::size_t k = 0; same && k < header.buffers.size(); ++k) {
      same = base->buffers[k].first == header.buffers[k].first &&
             base->buffers[k].second.size() == header.buffers[k].second;
    }
    if (!same) return "buffers differ from its base's";
  }

  try {
    std::vector<unsigned char> raw(header.raw_bytes);
    std::size_t got = ZSTD_decompress(raw.data(), raw.size(), payload, header.payload_bytes);
    if (ZSTD_isError(got)) return fmt::format("zstd: {}", ZSTD_getErrorName(got));
    if (got != header.raw_bytes) return fmt::format("payload decompresses to {} bytes, expected {}", got, header.raw_bytes);
    CheckpointState s;
    s.step = header.step;
    s.model_key = header.model_key;
    for (const auto& [name, size] : header.buffers) s.buffers.emplace_back(name, std::vector<float>(size));
    unshuffle_words(raw.data(), header.raw_bytes / 4, header.kind == CheckpointKind::kDelta ? base : nullptr, &s);
    *out = std::move(s);
  } catch (const std::bad_alloc&) {
    return fmt::format("out of memory decoding {} bytes", header.raw_bytes);
  }
  return "";
}

std::uint64_t checkpoint_xxh64(std::string_view bytes) { return XXH64(bytes.data(), bytes.size(), 0); }

}  // namespace chaosbench::bench::train
