#include "bench/collective/collective_config.h"

namespace chaosbench::bench {

CollectiveConfig collective_config(const CollectiveSettings& s) {
  CollectiveConfig cfg;
  cfg.collectives = s.collectives;
  cfg.algorithms = s.algorithms;
  cfg.min_bytes = s.min_size.bytes;
  cfg.max_bytes = s.max_size.bytes;
  cfg.factor = s.factor;
  cfg.warmup_iters = s.warmup_iters;
  cfg.iters = s.iters;
  cfg.duration = std::chrono::duration_cast<std::chrono::milliseconds>(s.duration.value);
  cfg.check = s.check;
  cfg.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(s.timeout.value);
  return cfg;
}

}  // namespace chaosbench::bench
