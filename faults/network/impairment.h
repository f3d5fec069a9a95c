// What an impairment fault does to the packets it matches, independent of the backend
// that does it: netem (through libnl) where the kernel has sch_netem, else the NFQUEUE
// delay line. network.delay, .loss, .corrupt, .duplicate and .reorder each fill a part.
#pragma once

#include <chrono>
#include <string>

#include "faults/network/delay_line.h"
#include "faults/network/tc_shaper.h"

namespace chaosbench::faults {

struct Impairment {
  std::chrono::nanoseconds delay{0};
  std::chrono::nanoseconds jitter{0};
  double delay_correlation = 0;  // probabilities and correlations as fractions 0..1
  bool normal = false;           // jitter distribution: normal instead of uniform
  double loss = 0;
  double loss_correlation = 0;
  double corrupt = 0;
  double duplicate = 0;
  double reorder = 0;
  double reorder_correlation = 0;
};

NetemSettings to_netem(const Impairment& imp);
DelayLineSettings to_delay_line(const Impairment& imp, std::uint64_t seed);

// Why the NFQUEUE delay line cannot do `imp` ("" when it can).
std::string delay_line_cannot(const Impairment& imp);

}  // namespace chaosbench::faults
