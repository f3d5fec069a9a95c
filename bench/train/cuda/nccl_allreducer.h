// Averages gradients across GPUs while backward is still running: the NCCL counterpart
// of the gloo GradientAllreducer (grad_allreducer.h), with the same buckets of whole
// layers (make_buckets) and the same contract (gradient_reducer.h). When backward reports
// a bucket's last layer done, an event recorded on the device's compute stream orders an
// in-place ncclAllReduce (sum, float) of the bucket on this object's own communication
// stream (the device's highest priority) after that layer's gradient kernels, while
// compute goes on with the layers below. No host thread is involved: the GPU runs the
// allreduces as soon as their inputs are ready. The extras ride with bucket 0 as a second,
// tiny allreduce in the same ncclGroup (one launch, no extra round trip).
//
// finish() waits for the last bucket (that wait is exposed_ms); comm_total_ms is the sum
// of each bucket's allreduce time measured by CUDA events on the communication stream.
//
// Set-up: rank 0 makes an ncclUniqueId and publishes it in the rendezvous store under
// "<key_prefix>/nccl_unique_id"; the others wait for it (up to the timeout). The key
// prefix must be unique to one communicator (the trainer's generation and attempt),
// since a stale id from an earlier communicator would make the ranks wait out the timeout.
// The communicator is non-blocking (ncclConfig_t::blocking = 0), so that no NCCL call can
// hang the caller: every wait polls ncclCommGetAsyncError against a deadline.
//
// Failures: an NCCL error (a peer's process exited: ncclRemoteError, a broken link:
// ncclSystemError) becomes bench::DeviceError(kCollective, the ncclResult_t); a CUDA error
// becomes DeviceError(kDevice, the cudaError_t); no progress within the timeout becomes
// CollectiveError. Either way the communicator is aborted (ncclCommAbort) on the spot;
// errors met in begin_step or layer_done are kept and thrown by finish(), so the three
// calls fail the way the gloo reducer's do. The object is then unusable: destroy it. The
// constructor throws the same errors.
// Threads: construction, the three calls and destruction come from one thread (the
// trainer's compute thread); each makes the device current on it. The device must
// outlive this object. The destructor finalises the communicator (bounded by the
// timeout, then aborts).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "bench/train/cuda/cuda_device.h"
#include "bench/train/comm/gradient_buckets.h"
#include "bench/train/comm/gradient_reducer.h"

namespace gloo::rendezvous {
class Store;
}

namespace chaosbench::bench::train::cuda {

class NcclGradientAllreducer final : public GradientReducer {
 public:
  // grads: the device's flat gradient buffer (MlpModel::grads()), laid out as `spans`.
  NcclGradientAllreducer(gloo::rendezvous::Store& store, const std::string& key_prefix, int rank, int world_size,
                         CudaDevice& device, float* grads, const std::vector<LayerSpan>& spans,
                         std::uint64_t bucket_bytes, std::chrono::milliseconds timeout, std::size_t extras);
  ~NcclGradientAllreducer() override;
  NcclGradientAllreducer(const NcclGradientAllreducer&) = delete;
  NcclGradientAllreducer& operator=(const NcclGradientAllreducer&) = delete;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  void begin_step(const std::vector<float>& extras) override;
  void layer_done(int layer) override;
  StepComm finish() override;  // throws DeviceError or CollectiveError

 private:
  using Clock = std::chrono::steady_clock;

  void exchange_id_and_init(gloo::rendezvous::Store& store, const std::string& key_prefix);
  void enqueue(std::size_t bucket);
  // Polls the communicator until its pending operation is posted (ncclSuccess); throws
  // on an error state or at the deadline.
  void wait_posted(const std::string& what, Clock::time_point deadline);
  void fail(std::exception_ptr e) noexcept;  // keeps the first error, aborts the comm
  void destroy() noexcept;

  CudaDevice& device_;
  int rank_;
  int world_size_;
  float* grads_;
  std::vector<Bucket> buckets_;
  std::chrono::milliseconds timeout_;
  std::size_t extras_;
  std::size_t next_bucket_ = 0;  // next bucket to enqueue this step

  ncclComm_t comm_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;      // compute stream: a bucket's gradients are written
  cudaEvent_t done_ = nullptr;       // comm stream: the step's last allreduce and copy
  std::vector<cudaEvent_t> start_;   // per bucket, timed
  std::vector<cudaEvent_t> end_;
  float* extras_dev_ = nullptr;      // device: the extras, reduced with bucket 0
  float* extras_host_ = nullptr;     // pinned: staged in, and the sums back
  std::exception_ptr error_;         // the first failure; finish() rethrows it
};

}  // namespace chaosbench::bench::train::cuda
