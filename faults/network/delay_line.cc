// Stub: the NFQUEUE delay line is being written on its own branch.
#include "faults/network/delay_line.h"

#include <stdexcept>

namespace chaosbench::faults {

struct DelayLine::Impl {
  std::uint16_t queue = 0;
};

DelayLine::DelayLine(int, std::uint16_t, const DelayLineSettings&) {
  throw std::runtime_error("the NFQUEUE delay line is not built yet");
}
DelayLine::~DelayLine() = default;
DelayLineStats DelayLine::stats() const { return {}; }
std::uint16_t DelayLine::queue_num() const { return impl_->queue; }

}  // namespace chaosbench::faults
