// What the trainer needs from its gradient communication, whatever carries it: gloo on
// host buffers (grad_allreducer.h) or NCCL on device buffers (cuda/nccl_allreducer.h).
// One step: begin_step with the extras (small values summed across ranks with the first
// bucket), layer_done as backward finishes each layer (last layer first), then finish,
// which waits for every bucket and returns the step's communication figures.
// Failures: finish() throws CollectiveError (a peer failed, a timeout) or
// bench::DeviceError (an error code from the communication library); the reducer is then
// unusable and is destroyed.
// Threads: the three calls come from one compute thread.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

namespace chaosbench::bench::train {

class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StepComm {
  double comm_total_ms = 0;  // wall time of this step's allreduces on the comm thread
  double exposed_ms = 0;     // how long finish() waited
  std::vector<float> extras;  // the summed extra values
};

class GradientReducer {
 public:
  virtual ~GradientReducer() = default;
  virtual void begin_step(const std::vector<float>& extras) = 0;
  virtual void layer_done(int layer) = 0;
  virtual StepComm finish() = 0;

  // finish() in pieces, for a reducer whose buckets complete one by one: once bucket 0's
  // sums are in, `accept(extras)` decides whether the step goes on; if it returns true,
  // `use(offset, count)` gets every bucket's gradients (as LayerSpan offsets, extras
  // excluded) as soon as they are summed, in bucket order, on this thread, while later
  // buckets are still on the wire. Fills `out` as finish() would (exposed_ms: only the
  // waits). Returns false, having done nothing, when the reducer cannot: call finish().
  virtual bool finish_each(const std::function<bool(const std::vector<float>& extras)>& /*accept*/,
                           const std::function<void(std::size_t offset, std::size_t count)>& /*use*/,
                           StepComm& /*out*/) {
    return false;
  }
};

}  // namespace chaosbench::bench::train
