#include "bench/common/flag_codec.h"

namespace chaosbench::bench {

common::Size FlagCodec<common::Size>::decode(const Po& v, const char* flag) const {
  auto parsed = common::parse_size(v);
  if (!parsed) throw std::invalid_argument(fmt::format("--{}: {}", flag, parsed.error));
  return *parsed;
}

common::Duration MillisCodec::decode(Po v, const char* flag) const {
  if (positive && v <= 0) throw std::invalid_argument(fmt::format("--{}: expected a positive number of milliseconds", flag));
  return common::Duration{std::chrono::milliseconds(clamp_negative && v < 0 ? 0 : v)};
}

common::Duration MicrosCodec::decode(Po v, const char* flag) const {
  if (v < min)
    throw std::invalid_argument(min == 0   ? fmt::format("--{}: expected 0 or more", flag)
                                : min == 1 ? fmt::format("--{}: expected a positive number of microseconds", flag)
                                           : fmt::format("--{}: expected a number of at least {}", flag, min));
  return common::Duration{std::chrono::microseconds(v)};
}

common::Duration DurationTextCodec::decode(const Po& v, const char* flag) const {
  auto parsed = common::parse_duration(v);
  if (!parsed) throw std::invalid_argument(fmt::format("--{}: {}", flag, parsed.error));
  return *parsed;
}

}  // namespace chaosbench::bench
