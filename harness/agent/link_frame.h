// Frames of the controller-agent link: one message is a 4-byte big-endian length (of
// what follows), a 1-byte type and a payload (JSON text for every type but records,
// which carry the workload's metrics protocol lines unchanged). A reader takes bytes as
// they arrive, in any split, and gives whole frames; a length over the limit or an
// unknown type is a broken peer, and the link is dropped (the reader says why and stays
// broken). Pure: no sockets. The messages and the handshake are in docs/agent-protocol.md.
// Threads: a reader belongs to one connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chaosbench::harness {

enum class MessageType : std::uint8_t {
  kHello = 1,    // agent -> controller: version, run id, host, the agent's nonce
  kWelcome = 2,  // controller -> agent: version, the controller's nonce, its proof
  kRefused = 3,  // either way: why, then the link closes
  kPing = 4,     // controller -> agent: a clock exchange (t0), also the dead-man switch's beat
  kPong = 5,     // agent -> controller: t0, t1, t2
  kCommand = 6,  // controller -> agent: start, signal, apply, revert, stop (with an id)
  kReply = 7,    // agent -> controller: a command's outcome (same id)
  kRecords = 8,  // agent -> controller: workload records, newline-separated
  kEvent = 9,    // agent -> controller: a process exited, a node event
  kBye = 10,     // either way: a clean end
  kProof = 11,   // agent -> controller: the agent's proof; nothing else is accepted before it
  kTelemetry = 12,  // agent -> controller: the agent's own samples (mesh, node telemetry), as records' lines
};

// The largest frame accepted (type + payload): a records batch is well below it.
inline constexpr std::size_t kMaxFrameBytes = 16u << 20;

// The frame's bytes. Throws std::length_error past kMaxFrameBytes.
std::string encode_frame(MessageType type, std::string_view payload);

struct Frame {
  MessageType type;
  std::string payload;
};

class FrameReader {
 public:
  // Appends bytes as they arrived.
  void feed(std::string_view bytes);
  // The next whole frame, if one is there. After a broken frame: nullopt for good, and
  // error() says why.
  std::optional<Frame> next();
  const std::string& error() const { return error_; }
  // Bytes received and not yet returned as frames.
  std::size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  std::size_t consumed_ = 0;
  std::string error_;
};

// The name of a type ("hello", ...), or "" for a byte that is none.
std::string_view message_type_name(std::uint8_t type);

}  // namespace chaosbench::harness
