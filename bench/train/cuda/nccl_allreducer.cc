// The NCCL gradient reducer (nccl_allreducer.h): bucket launches, the polling waits of a
// non-blocking communicator, and its set-up and tear-down.
#include "bench/train/cuda/nccl_allreducer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <gloo/rendezvous/store.h>

#include "bench/train/cuda/cuda_check.h"
#include "bench/train/cuda/cuda_train.h"

namespace chaosbench::bench::train::cuda {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Between two polls: spin (yield) for the first millisecond, where a healthy wait ends,
// then sleep briefly so a long wait costs no core.
void pause(Clock::time_point since) {
  if (Clock::now() - since < std::chrono::milliseconds(1)) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void check_nccl(ncclResult_t r, const std::string& call, ncclComm_t comm) {
  if (r != ncclSuccess) throw_nccl(r, call, comm);
}

}  // namespace

NcclGradientAllreducer::NcclGradientAllreducer(gloo::rendezvous::Store& store, const std::string& key_prefix,
                                               int rank, int world_size, CudaDevice& device, float* grads,
                                               const std::vector<LayerSpan>& spans, std::uint64_t bucket_bytes,
                                               std::chrono::milliseconds timeout, std::size_t extras)
    : device_(device), rank_(rank), world_size_(world_size), grads_(grads), buckets_(make_buckets(spans, bucket_bytes)),
      timeout_(timeout), extras_(extras) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw std::invalid_argument(fmt::format("NcclGradientAllreducer: rank {} of {}", rank, world_size));
  if (buckets_.empty()) throw std::invalid_argument("NcclGradientAllreducer: no layers");
  try {
    device_.bind();
    int least = 0, greatest = 0;
    check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    check_cuda(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
    check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    check_cuda(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      start_.push_back(nullptr);
      check_cuda(cudaEventCreate(&start_.back()), "cudaEventCreate");
      end_.push_back(nullptr);
      check_cuda(cudaEventCreate(&end_.back()), "cudaEventCreate");
    }
    const std::size_t bytes = std::max<std::size_t>(extras_, 1) * sizeof(float);
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&extras_dev_), bytes), "cudaMalloc (extras)");
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&extras_host_), bytes), "cudaMallocHost (extras)");
    std::memset(extras_host_, 0, bytes);
    exchange_id_and_init(store, key_prefix);
  } catch (...) {
    destroy();
    throw;
  }
}

NcclGradientAllreducer::~NcclGradientAllreducer() { destroy(); }

void NcclGradientAllreducer::exchange_id_and_init(gloo::rendezvous::Store& store, const std::string& key_prefix) {
  const std::string key = key_prefix + "/nccl_unique_id";
  ncclUniqueId id{};
  if (rank_ == 0) {
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr);
    try {
      store.set(key, std::vector<char>(id.internal, id.internal + sizeof id.internal));
    } catch (const std::exception& e) {  // gloo::IoException
      throw CollectiveError(fmt::format("rank 0: cannot publish the NCCL id under '{}': {}", key, e.what()));
    }
  } else {
    std::vector<char> bytes;
    try {
      store.wait({key}, timeout_);
      bytes = store.get(key);
    } catch (const std::exception& e) {  // gloo::IoException on a timeout
      throw CollectiveError(fmt::format("rank {}: no NCCL id from rank 0 under '{}' within {} ms: {}", rank_, key,
                                        timeout_.count(), e.what()));
    }
    if (bytes.size() != sizeof id.internal)
      throw CollectiveError(fmt::format("rank {}: NCCL id under '{}' has {} bytes, not {}", rank_, key, bytes.size(),
                                        sizeof id.internal));
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const auto deadline = Clock::now() + timeout_;
  const ncclResult_t r = ncclCommInitRankConfig(&comm_, world_size_, id, rank_, &config);
  // In non-blocking mode the handle exists even while the set-up is in progress, and on
  // most errors, so that it can be aborted.
  if (r != ncclSuccess && r != ncclInProgress) {
    const ncclComm_t comm = comm_;
    comm_ = nullptr;
    if (comm != nullptr) ncclCommAbort(comm);
    throw_nccl(r, "ncclCommInitRankConfig", nullptr);
  }
  try {
    wait_posted(fmt::format("ncclCommInitRankConfig (rank {} of {})", rank_, world_size_), deadline);
  } catch (...) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
    throw;
  }
}

void NcclGradientAllreducer::wait_posted(const std::string& what, Clock::time_point deadline) {
  const auto start = Clock::now();
  while (true) {
    ncclResult_t state = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError", comm_);
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) throw_nccl(state, what, comm_);
    if (Clock::now() >= deadline)
      throw CollectiveError(fmt::format("{}: no progress within {} ms", what, timeout_.count()));
    pause(start);
  }
}

void NcclGradientAllreducer::begin_step(const std::vector<float>& extras) {
  next_bucket_ = 0;
  if (error_) return;
  try {
    device_.bind();
    std::fill(extras_host_, extras_host_ + extras_, 0.0f);
    std::copy_n(extras.begin(), std::min(extras.size(), extras_), extras_host_);
    if (extras_ > 0)
      check_cuda(cudaMemcpyAsync(extras_dev_, extras_host_, extras_ * sizeof(float), cudaMemcpyHostToDevice,
                                 comm_stream_),
                 "cudaMemcpyAsync (extras to device)");
  } catch (...) {
    fail(std::current_exception());
  }
}

void NcclGradientAllreducer::layer_done(int layer) {
  // Backward goes from the last layer down: a bucket is complete when its lowest layer is.
  std::size_t ready = next_bucket_;
  while (ready < buckets_.size() && buckets_[ready].first_layer >= layer) ++ready;
  if (ready == next_bucket_ || error_) {
    next_bucket_ = ready;
    return;
  }
  try {
    device_.bind();
    // Everything issued on the compute stream so far (these layers' gradients) comes first.
    check_cuda(cudaEventRecord(ready_, device_.stream()), "cudaEventRecord (gradients ready)");
    check_cuda(cudaStreamWaitEvent(comm_stream_, ready_, 0), "cudaStreamWaitEvent (gradients ready)");
    for (std::size_t b = next_bucket_; b < ready; ++b) enqueue(b);
  } catch (...) {
    fail(std::current_exception());
  }
  next_bucket_ = ready;
}

void NcclGradientAllreducer::enqueue(std::size_t bucket) {
  const auto& b = buckets_[bucket];
  const std::string what = fmt::format("ncclAllReduce of gradient bucket {} ({} floats{})", bucket, b.count,
                                       bucket == 0 && extras_ > 0 ? fmt::format(" and {} extras", extras_) : "");
  check_cuda(cudaEventRecord(start_[bucket], comm_stream_), "cudaEventRecord (bucket start)");
  check_nccl(ncclGroupStart(), "ncclGroupStart", comm_);
  float* data = grads_ + b.offset;
  ncclResult_t r = ncclAllReduce(data, data, b.count, ncclFloat, ncclSum, comm_, comm_stream_);
  if ((r == ncclSuccess || r == ncclInProgress) && bucket == 0 && extras_ > 0)
    r = ncclAllReduce(extras_dev_, extras_dev_, extras_, ncclFloat, ncclSum, comm_, comm_stream_);
  const ncclResult_t end = ncclGroupEnd();  // always closes the group, even after an error
  if (r != ncclSuccess && r != ncclInProgress) throw_nccl(r, what, comm_);
  if (end != ncclSuccess && end != ncclInProgress) throw_nccl(end, what, comm_);
  // NCCL's rule for non-blocking communicators: nothing more on its stream until posted.
  wait_posted(what, Clock::now() + timeout_);
  check_cuda(cudaEventRecord(end_[bucket], comm_stream_), "cudaEventRecord (bucket end)");
}

StepComm NcclGradientAllreducer::finish() {
  const auto start = Clock::now();
  layer_done(-1);  // whatever backward did not announce goes now
  if (!error_) {
    try {
      device_.bind();
      if (extras_ > 0)
        check_cuda(cudaMemcpyAsync(extras_host_, extras_dev_, extras_ * sizeof(float), cudaMemcpyDeviceToHost,
                                   comm_stream_),
                   "cudaMemcpyAsync (extras to host)");
      check_cuda(cudaEventRecord(done_, comm_stream_), "cudaEventRecord (step done)");
      const auto deadline = Clock::now() + timeout_;
      while (true) {
        const cudaError_t q = cudaEventQuery(done_);
        if (q == cudaSuccess) break;
        if (q != cudaErrorNotReady) throw_cuda(q, "cudaEventQuery (allreduces of the step)");
        (void)cudaGetLastError();  // "not ready" is recorded as the thread's last error
        ncclResult_t state = ncclSuccess;
        check_nccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError", comm_);
        if (state != ncclSuccess && state != ncclInProgress)
          throw_nccl(state, fmt::format("allreduces of the step ({} buckets)", buckets_.size()), comm_);
        if (Clock::now() >= deadline)
          throw CollectiveError(fmt::format("allreduces of the step ({} buckets) not done within {} ms",
                                            buckets_.size(), timeout_.count()));
        pause(start);
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }
  if (error_) std::rethrow_exception(error_);
  StepComm out;
  out.exposed_ms = ms_since(start);
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_[b], end_[b]), "cudaEventElapsedTime");
    out.comm_total_ms += ms;
  }
  out.extras.assign(extras_host_, extras_host_ + extras_);
  return out;
}

void NcclGradientAllreducer::fail(std::exception_ptr e) noexcept {
  if (!error_) error_ = e;
  if (comm_ != nullptr) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }
}

void NcclGradientAllreducer::destroy() noexcept {
  cudaSetDevice(device_.index());
  if (comm_ != nullptr) {
    // A clean end when every rank is healthy; an abort when finalising fails or stalls.
    const ncclResult_t finalize = ncclCommFinalize(comm_);
    bool clean = finalize == ncclSuccess || finalize == ncclInProgress;
    const auto deadline = Clock::now() + timeout_;
    const auto start = Clock::now();
    while (clean) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess || (state != ncclSuccess && state != ncclInProgress) ||
          Clock::now() >= deadline) {
        clean = false;
      } else if (state == ncclSuccess) {
        break;
      } else {
        pause(start);
      }
    }
    if (clean) {
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);
    }
    comm_ = nullptr;
  }
  if (comm_stream_ != nullptr) cudaStreamSynchronize(comm_stream_);
  for (cudaEvent_t e : start_) cudaEventDestroy(e);
  for (cudaEvent_t e : end_) cudaEventDestroy(e);
  start_.clear();
  end_.clear();
  if (ready_ != nullptr) cudaEventDestroy(ready_);
  if (done_ != nullptr) cudaEventDestroy(done_);
  if (extras_host_ != nullptr) cudaFreeHost(extras_host_);
  if (extras_dev_ != nullptr) cudaFree(extras_dev_);
  if (comm_stream_ != nullptr) cudaStreamDestroy(comm_stream_);
  ready_ = done_ = nullptr;
  extras_host_ = extras_dev_ = nullptr;
  comm_stream_ = nullptr;
  (void)cudaGetLastError();
}

std::unique_ptr<GradientReducer> make_nccl_allreducer(Device& device, gloo::rendezvous::Store& store,
                                                      const std::string& key_prefix, int rank, int world_size,
                                                      float* grads, const std::vector<LayerSpan>& spans,
                                                      std::uint64_t bucket_bytes, std::chrono::milliseconds timeout,
                                                      std::size_t extras) {
  auto* cuda = dynamic_cast<CudaDevice*>(&device);
  if (cuda == nullptr)
    throw std::invalid_argument("the NCCL gradient reducer needs the cuda device, not " + device.describe());
  return std::make_unique<NcclGradientAllreducer>(store, key_prefix, rank, world_size, *cuda, grads, spans,
                                                  bucket_bytes, timeout, extras);
}

}  // namespace chaosbench::bench::train::cuda
