#include "harness/agent/link_frame.h"

#include <array>
#include <stdexcept>

namespace chaosbench::harness {
namespace {

constexpr std::array<std::string_view, 13> kNames{"",      "hello",   "welcome", "refused", "ping",     "pong", "command",
                                                  "reply", "records", "event",   "bye",     "proof", "telemetry"};

}  // namespace

std::string_view message_type_name(std::uint8_t type) { return type < kNames.size() ? kNames[type] : ""; }

std::string encode_frame(MessageType type, std::string_view payload) {
  const std::size_t length = payload.size() + 1;
  if (length > kMaxFrameBytes) throw std::length_error("a link frame over 16 MiB");
  std::string out;
  out.reserve(4 + length);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((length >> shift) & 0xff));
  out.push_back(static_cast<char>(type));
  out.append(payload);
  return out;
}

void FrameReader::feed(std::string_view bytes) {
  if (!error_.empty()) return;
  // Drop what was returned already once it is most of the buffer, so a long-lived link's
  // buffer stays the size of one frame.
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<Frame> FrameReader::next() {
  if (!error_.empty() || buffered() < 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + consumed_);
  const std::size_t length = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) | (std::size_t{p[2]} << 8) | p[3];
  if (length == 0 || length > kMaxFrameBytes) {
    error_ = length == 0 ? "a frame without a type" : "a frame of " + std::to_string(length) + " bytes (the limit is 16 MiB)";
    return std::nullopt;
  }
  if (buffered() >= 5 && message_type_name(p[4]).empty()) {
    error_ = "a frame of unknown type " + std::to_string(p[4]);
    return std::nullopt;
  }
  if (buffered() < 4 + length) return std::nullopt;
  Frame f{static_cast<MessageType>(p[4]), buffer_.substr(consumed_ + 5, length - 1)};
  consumed_ += 4 + length;
  return f;
}

}  // namespace chaosbench::harness
