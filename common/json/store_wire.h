// The rendezvous store's wire format ("tcp:HOST:PORT" stores; docs/agent-protocol.md,
// "Rendezvous store"), shared by the controller's server and the ranks' client.
// A frame is a 4-byte big-endian length and a body: one code byte (an Op in requests, a
// Status in replies), then fields, each a 4-byte big-endian length and its bytes.
// Pure encoding plus blocking socket I/O; no state.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::common::store_wire {

// The per-run token travels to ranks in this variable, never on a command line.
inline constexpr const char* kTokenEnv = "CHAOSBENCH_STORE_TOKEN";

inline constexpr std::size_t kMaxKey = 1024;
inline constexpr std::size_t kMaxValue = std::size_t{1} << 20;
// A frame never exceeds this: one maximal value plus room for keys (a list reply
// larger than this is refused, not truncated).
inline constexpr std::size_t kMaxFrame = kMaxValue + 64 * 1024;
// A blocking request waits at most this long, whatever the client asks.
inline constexpr std::chrono::milliseconds kMaxWait{3600 * 1000};

enum class Op : std::uint8_t {
  kHello = 1,    // token                      -> ok
  kSet = 2,      // key, value                 -> ok
  kGet = 3,      // key, timeout_ms            -> ok value | timeout
  kWait = 4,     // timeout_ms, key...         -> ok | timeout
  kAddOnce = 5,  // key, value                 -> ok stored (the first value set wins)
  kRemove = 6,   // key                        -> ok
  kList = 7,     // prefix                     -> ok key, value, key, value...
};

enum class Status : std::uint8_t { kOk = 0, kTimeout = 1, kError = 2 };

struct Message {
  std::uint8_t code = 0;
  std::vector<std::string> fields;
};

// The whole frame, length included.
std::string encode(const Message& m);
// A body (without the length); nullopt when a field runs past its end.
std::optional<Message> decode(std::string_view body);

// Reads one frame's body from a blocking socket. False on end of file, an error, or a
// length above `max` (the caller then drops the connection: the stream is out of step).
bool read_frame(int fd, std::string* body, std::size_t max = kMaxFrame);
// Writes all of `data` (MSG_NOSIGNAL: a closed peer is false, never SIGPIPE).
bool write_all(int fd, std::string_view data);

}  // namespace chaosbench::common::store_wire
