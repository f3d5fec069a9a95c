#include "bench/train/comm/grad_allreducer.h"

#include "bench/common/denormals.h"
#include "bench/common/device_error.h"
#include "bench/common/thread_priority.h"
#include "bench/common/elapsed.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;
// Tags apart from the state broadcasts and barriers the trainer runs on the same context.
constexpr std::uint32_t kBucketTagBase = 1000;


}  // namespace

GradientAllreducer::GradientAllreducer(std::shared_ptr<gloo::Context> context, float* grads,
                                       const std::vector<LayerSpan>& spans, std::uint64_t bucket_bytes,
                                       std::chrono::milliseconds timeout, std::size_t extras,
                                       AllreduceAlgorithm algorithm, std::shared_ptr<DeviceFaults> faults,
                                       std::size_t tail)
    : context_(std::move(context)), grads_(grads), buckets_(make_buckets(spans, bucket_bytes)), timeout_(timeout),
      algorithm_(algorithm), faults_(std::move(faults)), extras_(extras) {
  extras_at_ = place_extras(grads_, buckets_.front(), extras_, tail, staged_);
  thread_ = std::thread([this] { loop(); });
}

GradientAllreducer::~GradientAllreducer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  // A communication thread held by collective.hang is let go (the step it served has
  // been abandoned); one inside gloo returns at the op timeout.
  const DeviceFaults::Release release(faults_.get());
  thread_.join();
}

void GradientAllreducer::begin_step(const std::vector<float>& extras) {
  std::lock_guard lock(mutex_);
  queue_.clear();
  done_ = 0;
  busy_ms_ = 0;
  next_bucket_ = 0;
  std::fill(extras_at_, extras_at_ + extras_, 0.0f);
  std::copy_n(extras.begin(), std::min(extras.size(), extras_), extras_at_);
}

void GradientAllreducer::layer_done(int layer) {
  const std::size_t ready = buckets_complete(buckets_, next_bucket_, layer);
  if (ready == next_bucket_) return;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t b = next_bucket_; b < ready; ++b) queue_.push_back(b);
  }
  next_bucket_ = ready;
  cv_.notify_all();
}

StepComm GradientAllreducer::finish() {
  layer_done(-1);  // whatever backward did not announce (no callback for a layer) goes now
  auto start = Clock::now();
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return done_ == buckets_.size() || !error_.empty(); });
  if (error_library_) std::rethrow_exception(error_library_);
  if (!error_.empty()) throw CollectiveError(error_);
  StepComm out;
  out.exposed_ms = ms_since(start);
  out.comm_total_ms = busy_ms_;
  out.extras.assign(extras_at_, extras_at_ + extras_);
  return out;
}

void GradientAllreducer::loop() {
  set_thread_nice(kCommThreadNice);
  flush_denormals();  // the sums of gradients, as the compute thread
  while (true) {
    std::size_t bucket;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || (!queue_.empty() && error_.empty()); });
      if (stop_) return;
      bucket = queue_.front();
      queue_.pop_front();
    }
    auto start = Clock::now();
    std::string error;
    std::exception_ptr library;
    try {
      reduce(bucket);
    } catch (const DeviceError& e) {  // the library's own error code: kept as it is
      error = e.what();
      library = std::current_exception();
    } catch (const std::exception& e) {
      error = fmt::format("allreduce of gradient bucket {} ({} floats): {}", bucket, buckets_[bucket].count, e.what());
      std::replace(error.begin(), error.end(), '\n', ' ');
    }
    {
      std::lock_guard lock(mutex_);
      busy_ms_ += ms_since(start);
      if (!error.empty()) {
        error_ = error;
        error_library_ = library;
        queue_.clear();
      } else {
        ++done_;
      }
    }
    cv_.notify_all();
  }
}

void GradientAllreducer::reduce(std::size_t bucket) {
  if (faults_) faults_->collective();  // collective.error / collective.hang, as NCCL would
  const auto& b = buckets_[bucket];
  float* data = grads_ + b.offset;
  std::size_t count = b.count;
  if (bucket == 0) {  // with the extras after it: in place, or staged
    count += extras_;
    if (!staged_.empty()) {
      std::memcpy(staged_.data(), data, b.count * sizeof(float));
      data = staged_.data();
    }
  }
  gloo::AllreduceOptions opts(context_);
  opts.setAlgorithm(algorithm_ == AllreduceAlgorithm::kBcube ? gloo::AllreduceOptions::Algorithm::BCUBE
                                                             : gloo::AllreduceOptions::Algorithm::RING);
  opts.setOutput(data, count);
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));
  opts.setTag(kBucketTagBase + static_cast<std::uint32_t>(bucket));
  opts.setTimeout(timeout_);
  gloo::allreduce(opts);
  if (bucket == 0 && !staged_.empty()) std::memcpy(grads_ + b.offset, staged_.data(), b.count * sizeof(float));
}

}  // namespace chaosbench::bench::train
