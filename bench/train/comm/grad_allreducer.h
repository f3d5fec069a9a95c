// Averages gradients across ranks while backward is still running, as PyTorch DDP does:
// the flat gradient buffer is cut into buckets of whole layers, last layer first (the
// order backward produces them), each closed once it holds `bucket_bytes`; when backward
// reports a bucket's last layer done, the bucket goes to a communication thread that
// runs a gloo allreduce (sum) on it in place while the compute thread goes on with the
// layers below. finish() waits for the rest: that wait is the step's exposed
// communication.
//
// A few extra floats (the shard's loss, control flags) ride with the first bucket, so
// they cost no extra round trip: they are known before backward starts. They sit right
// after the gradients when the buffer has room for them there (`tail`), so the first
// bucket is reduced in place; otherwise it is staged (copied out and back) with them.
//
// The allreduce algorithm is gloo's ring or bcube (recursive halving and doubling: log2(n)
// exchange rounds instead of 2(n-1), so fewer points where a rank waits for the slowest
// peer). The communication thread runs at a higher priority where the host allows
// (bench/common/thread_priority.h).
//
// Failures: a gloo error (a peer closed the connection, or an op timed out) stops the
// remaining buckets of the step; finish() throws CollectiveError. An injected
// collective.error (DeviceFaults::collective, checked before each bucket) is rethrown as
// the DeviceError it is; collective.hang blocks the communication thread. The context is then
// unusable: destroy this object and the context, and build new ones.
// Threads: begin_step, layer_done and finish are called from one compute thread; the
// allreduces run on the object's own thread. The destructor joins it (which can take up
// to the op timeout when a peer hangs).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gloo/context.h>

#include "bench/common/device_faults.h"
#include "bench/train/comm/gradient_buckets.h"
#include "bench/train/comm/gradient_reducer.h"
#include "bench/compute/mlp_model.h"

namespace chaosbench::bench::train {

// gloo's ring or bcube (GradientAllreducer), or the ring on connections of its own
// (TcpRingReducer, tcp_ring_reducer.h).
enum class AllreduceAlgorithm { kRing, kBcube, kTcpRing };

class GradientAllreducer final : public GradientReducer {
 public:
  // grads: host-addressable flat gradient buffer (the CPU device's; a GPU device stages),
  // with `tail` writable floats after the last layer's gradients.
  GradientAllreducer(std::shared_ptr<gloo::Context> context, float* grads, const std::vector<LayerSpan>& spans,
                     std::uint64_t bucket_bytes, std::chrono::milliseconds timeout, std::size_t extras,
                     AllreduceAlgorithm algorithm = AllreduceAlgorithm::kBcube,
                     std::shared_ptr<DeviceFaults> faults = nullptr, std::size_t tail = 0);
  ~GradientAllreducer();
  GradientAllreducer(const GradientAllreducer&) = delete;
  GradientAllreducer& operator=(const GradientAllreducer&) = delete;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  void begin_step(const std::vector<float>& extras) override;
  void layer_done(int layer) override;
  StepComm finish() override;  // throws CollectiveError

 private:
  void loop();
  void reduce(std::size_t bucket);

  std::shared_ptr<gloo::Context> context_;
  float* grads_;
  std::vector<Bucket> buckets_;
  std::chrono::milliseconds timeout_;
  AllreduceAlgorithm algorithm_;
  std::shared_ptr<DeviceFaults> faults_;  // collective faults, checked before each bucket
  std::vector<float> staged_;  // bucket 0 followed by the extras, when they do not fit in place
  std::size_t extras_ = 0;
  float* extras_at_ = nullptr;  // where the extras are: after bucket 0 in grads_ or in staged_
  std::size_t next_bucket_ = 0;  // compute thread: next bucket to hand over

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::size_t> queue_;  // under mutex_
  std::size_t done_ = 0;           // buckets finished this step, under mutex_
  double busy_ms_ = 0;             // under mutex_
  std::string error_;              // under mutex_
  std::exception_ptr error_library_;  // under mutex_: a DeviceError, rethrown as it is
  bool stop_ = false;              // under mutex_
  std::thread thread_;
};

}  // namespace chaosbench::bench::train
