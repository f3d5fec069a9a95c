// The gradient ring's two halves and its threads; its connections: tcp_ring_connect.cc.
#include "bench/train/comm/tcp_ring_reducer.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/common/denormals.h"
#include "bench/common/device_error.h"
#include "bench/common/thread_priority.h"
#include "common/values/errno_text.h"

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kRingMagic = 0x47524243;  // "CBRG"
constexpr std::uint8_t kReduceScatter = 0, kAllgather = 1;
constexpr std::size_t kBounceFloats = 16384;  // 64 KiB: a reduce-scatter payload is summed this much at a time

// Every message: what it is, then `count` floats.
struct RingHeader {
  std::uint32_t magic;
  std::uint32_t step;
  std::uint32_t bucket;
  std::uint8_t half;  // kReduceScatter or kAllgather
  std::uint8_t pad;
  std::uint16_t ring_step;
  std::uint32_t count;
};
static_assert(sizeof(RingHeader) == 20);

using common::errno_text;

int ring_mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace

TcpRingReducer::TcpRingReducer(gloo::rendezvous::Store& store, const std::string& key, int rank, int size,
                               const std::string& host, float* grads, const std::vector<LayerSpan>& spans,
                               std::uint64_t bucket_bytes, std::chrono::milliseconds timeout, std::size_t extras,
                               std::size_t tail, std::shared_ptr<DeviceFaults> faults)
    : rank_(rank), size_(size), grads_(grads), buckets_(make_buckets(spans, bucket_bytes)), timeout_(timeout),
      faults_(std::move(faults)), extras_(extras) {
  if (size_ < 1 || rank_ < 0 || rank_ >= size_) throw std::invalid_argument("TcpRingReducer: rank outside 0..size-1");
  extras_at_ = place_extras(grads_, buckets_.front(), extras_, tail, staged_);
  gathered_.assign(buckets_.size(), 0);
  expected_.assign(buckets_.size(), 0);
  // Headers carry 32-bit counts and 16-bit ring steps.
  if (size_ > 65536) throw std::invalid_argument("TcpRingReducer: at most 65536 ranks");
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    if (buckets_[b].count + (b == 0 ? extras_ : 0) > std::size_t{0xffffffff})
      throw std::invalid_argument("TcpRingReducer: a bucket of 2^32 floats or more");
  if (size_ == 1) return;  // nothing to exchange
  bounce_.resize(kBounceFloats);
  try {
    connect_ring(store, key, host);
    sender_ = std::thread([this] { send_loop(); });
    receiver_ = std::thread([this] { receive_loop(); });
  } catch (...) {  // no destructor runs for a constructor that throws
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (sender_.joinable()) sender_.join();
    if (send_fd_ >= 0) ::close(send_fd_);
    if (recv_fd_ >= 0) ::close(recv_fd_);
    throw;
  }
}

TcpRingReducer::~TcpRingReducer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  const DeviceFaults::Release release(faults_.get());  // a sender held by collective.hang goes
  // Wakes a thread blocked in send or recv: both then see stop_.
  if (send_fd_ >= 0) ::shutdown(send_fd_, SHUT_RDWR);
  if (recv_fd_ >= 0) ::shutdown(recv_fd_, SHUT_RDWR);
  if (sender_.joinable()) sender_.join();
  if (receiver_.joinable()) receiver_.join();
  if (send_fd_ >= 0) ::close(send_fd_);
  if (recv_fd_ >= 0) ::close(recv_fd_);
}

TcpRingReducer::Segment TcpRingReducer::segment(std::size_t bucket, int index) {
  const auto& b = buckets_[bucket];
  float* base = bucket == 0 && !staged_.empty() ? staged_.data() : grads_ + b.offset;
  const std::size_t count = b.count + (bucket == 0 ? extras_ : 0);
  const std::size_t per = (count + static_cast<std::size_t>(size_) - 1) / static_cast<std::size_t>(size_);
  const std::size_t begin = std::min(count, static_cast<std::size_t>(ring_mod(index, size_)) * per);
  const std::size_t end = std::min(count, begin + per);
  return {base + begin, static_cast<std::uint32_t>(end - begin)};
}

void TcpRingReducer::begin_step(const std::vector<float>& extras) {
  std::lock_guard lock(mutex_);
  ++step_;
  active_ = true;
  ready_ = 0;
  next_bucket_ = 0;
  sends_.clear();
  std::fill(gathered_.begin(), gathered_.end(), 0);
  complete_ = 0;
  busy_ms_ = 0;
  std::fill(extras_at_, extras_at_ + extras_, 0.0f);
  std::copy_n(extras.begin(), std::min(extras.size(), extras_), extras_at_);
}

void TcpRingReducer::layer_done(int layer) {
  const std::size_t ready = buckets_complete(buckets_, next_bucket_, layer);
  if (ready == next_bucket_) return;
  if (next_bucket_ == 0 && !staged_.empty())
    std::memcpy(staged_.data(), grads_ + buckets_.front().offset, buckets_.front().count * sizeof(float));
  {
    std::lock_guard lock(mutex_);
    if (next_bucket_ == 0) first_ready_ = Clock::now();
    for (std::size_t b = next_bucket_; b < ready; ++b) {
      if (size_ > 1) {
        sends_.push_back({static_cast<std::uint32_t>(b), kReduceScatter, 0, static_cast<std::uint32_t>(rank_)});
      } else if (++complete_ == buckets_.size()) {
        busy_ms_ = 0;
      }
    }
    ready_ = ready;
  }
  next_bucket_ = ready;
  cv_.notify_all();
}

bool TcpRingReducer::bucket_done(std::size_t bucket) const {
  return size_ == 1 ? bucket < ready_ : gathered_[bucket] == size_ - 1;
}

double TcpRingReducer::wait_for(std::unique_lock<std::mutex>& lock, const std::function<bool()>& done) {
  const auto start = Clock::now();
  cv_.wait(lock, [&] { return !error_.empty() || done(); });
  if (!error_.empty()) {
    active_ = false;
    if (error_library_) std::rethrow_exception(error_library_);
    throw CollectiveError(error_);
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<float> TcpRingReducer::extras_out() {
  if (!staged_.empty())
    std::memcpy(grads_ + buckets_.front().offset, staged_.data(), buckets_.front().count * sizeof(float));
  return {extras_at_, extras_at_ + extras_};
}

StepComm TcpRingReducer::finish() {
  layer_done(-1);  // whatever backward did not announce goes now
  std::unique_lock lock(mutex_);
  StepComm out;
  // Done when every allgather arrived and every message of ours is out: the next step's
  // backward overwrites the buffers the sender reads.
  out.exposed_ms = wait_for(lock, [&] { return complete_ == buckets_.size() && sends_.empty() && sending_ == 0; });
  active_ = false;
  out.comm_total_ms = busy_ms_;
  lock.unlock();
  out.extras = extras_out();
  return out;
}

bool TcpRingReducer::finish_each(const std::function<bool(const std::vector<float>&)>& accept,
                                 const std::function<void(std::size_t, std::size_t)>& use, StepComm& out) {
  layer_done(-1);
  std::unique_lock lock(mutex_);
  out.exposed_ms = wait_for(lock, [&] { return bucket_done(0); });
  lock.unlock();
  out.extras = extras_out();
  const bool accepted = accept(out.extras);
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    if (b > 0) {
      lock.lock();
      out.exposed_ms += wait_for(lock, [&] { return bucket_done(b); });
      lock.unlock();
    }
    // The reducer's threads never touch a completed bucket again this step.
    if (accepted) use(buckets_[b].offset, buckets_[b].count);
  }
  lock.lock();
  out.exposed_ms += wait_for(lock, [&] { return complete_ == buckets_.size() && sends_.empty() && sending_ == 0; });
  active_ = false;
  out.comm_total_ms = busy_ms_;
  return true;
}

void TcpRingReducer::fail(const std::string& error, std::exception_ptr library) {
  {
    std::lock_guard lock(mutex_);
    if (stop_ || !error_.empty()) return;  // the first error is the one that counts
    error_ = error;
    error_library_ = std::move(library);
    sends_.clear();
  }
  cv_.notify_all();
}

void TcpRingReducer::send_loop() {
  set_thread_nice(kCommThreadNice);
  while (true) {
    Send s;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || (!sends_.empty() && error_.empty()); });
      if (stop_) return;
      s = sends_.front();
      sends_.pop_front();
      ++sending_;
    }
    try {
      // collective.error / collective.hang act before each bucket, as a library's call would.
      if (faults_ && s.half == kReduceScatter && s.ring_step == 0) {
        held_ = true;
        struct Unhold {
          TcpRingReducer& r;
          ~Unhold() {
            {
              std::lock_guard lock(r.mutex_);
              r.held_ = false;
            }
            r.cv_.notify_all();
          }
        } unhold{*this};
        faults_->collective();
      }
      write_message(s);
    } catch (const DeviceError& e) {
      fail(e.what(), std::current_exception());
    } catch (const std::exception& e) {
      fail(e.what());
    }
    {
      std::lock_guard lock(mutex_);
      --sending_;
    }
    cv_.notify_all();
  }
}

void TcpRingReducer::write_message(const Send& s) {
  const Segment seg = segment(s.bucket, static_cast<int>(s.segment));
  RingHeader h{kRingMagic, 0, s.bucket, static_cast<std::uint8_t>(s.half), 0, static_cast<std::uint16_t>(s.ring_step), seg.count};
  {
    std::lock_guard lock(mutex_);
    h.step = step_;
  }
  iovec iov[2] = {{&h, sizeof h}, {seg.data, seg.count * sizeof(float)}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  std::size_t left = sizeof h + seg.count * sizeof(float);
  while (left > 0) {
    const ssize_t n = ::sendmsg(send_fd_, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      throw CollectiveError(err == EAGAIN || err == EWOULDBLOCK
                                ? fmt::format("gradient ring: sending to rank {} made no progress for {} ms",
                                              ring_mod(rank_ + 1, size_), timeout_.count())
                                : fmt::format("gradient ring: sending to rank {}: {}", ring_mod(rank_ + 1, size_),
                                              errno_text(err)));
    }
    left -= static_cast<std::size_t>(n);
    auto done = static_cast<std::size_t>(n);
    while (done > 0 && msg.msg_iovlen > 0) {  // skip what went out
      if (done >= msg.msg_iov->iov_len) {
        done -= msg.msg_iov->iov_len;
        ++msg.msg_iov;
        --msg.msg_iovlen;
      } else {
        msg.msg_iov->iov_base = static_cast<char*>(msg.msg_iov->iov_base) + done;
        msg.msg_iov->iov_len -= done;
        done = 0;
      }
    }
  }
}

void TcpRingReducer::read_exact(void* dst, std::size_t bytes) {
  auto* p = static_cast<char*>(dst);
  while (bytes > 0) {
    const ssize_t n = ::recv(recv_fd_, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    const int prev = ring_mod(rank_ - 1, size_);
    if (n == 0) throw CollectiveError(fmt::format("gradient ring: rank {} closed its connection", prev));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && held_) continue;  // a hung collective: wait
    if (n < 0) {
      const int err = errno;
      throw CollectiveError(err == EAGAIN || err == EWOULDBLOCK
                                ? fmt::format("gradient ring: nothing from rank {} for {} ms", prev, timeout_.count())
                                : fmt::format("gradient ring: receiving from rank {}: {}", prev, errno_text(err)));
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void TcpRingReducer::receive_loop() {
  set_thread_nice(kCommThreadNice);
  flush_denormals();  // it sums gradients, as the compute thread computes them
  const std::size_t per_step = buckets_.size() * 2 * static_cast<std::size_t>(size_ - 1);
  std::size_t received = 0;
  std::uint32_t step = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || (active_ && error_.empty() && (step != step_ || received < per_step)); });
      if (stop_) return;
      if (step != step_) {
        step = step_;
        received = 0;
        std::fill(expected_.begin(), expected_.end(), 0);
      }
    }
    try {
      receive_one();
      ++received;
    } catch (const std::exception& e) {
      // While collective.hang holds our sender, a hung library call would not return
      // either: the peers giving up on us (timeouts, closed connections) is not reported
      // until the hold ends.
      std::unique_lock lock(mutex_);
      cv_.wait_for(lock, std::chrono::hours(24), [&] { return stop_ || !held_; });
      lock.unlock();
      fail(e.what());
    }
  }
}

// One message: placed where its header says, then what follows from it queued for the sender.
void TcpRingReducer::receive_one() {
  RingHeader h{};
  read_exact(&h, sizeof h);
  std::uint32_t step;
  {
    std::lock_guard lock(mutex_);
    step = step_;
  }
  const int s = h.ring_step;
  // Within a bucket the previous rank sends reduce-scatter steps 0..n-2, then allgather
  // steps 0..n-2, in this order (each follows from the one before); buckets interleave.
  if (h.magic != kRingMagic || h.step != step || h.bucket >= buckets_.size() || h.half > kAllgather || s >= size_ - 1 ||
      h.half * (size_ - 1) + s != expected_[h.bucket])
    throw CollectiveError(fmt::format("gradient ring: a message out of step from rank {} (step {}, expected {})",
                                      ring_mod(rank_ - 1, size_), h.step, step));
  ++expected_[h.bucket];
  // Reduce-scatter step s brings segment r-s-1 (to add to ours); allgather step s brings
  // segment r-s (the final sums).
  const int index = h.half == kReduceScatter ? rank_ - s - 1 : rank_ - s;
  const Segment seg = segment(h.bucket, index);
  if (h.count != seg.count)
    throw CollectiveError(fmt::format("gradient ring: rank {} sent {} floats for a segment of {}",
                                      ring_mod(rank_ - 1, size_), h.count, seg.count));
  if (h.half == kAllgather) {
    read_exact(seg.data, seg.count * sizeof(float));
  } else {
    {  // our own gradients for this bucket must be final before theirs are added
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || ready_ > h.bucket; });
      if (stop_) return;
    }
    for (std::uint32_t done = 0; done < seg.count;) {
      const std::uint32_t n = std::min<std::uint32_t>(static_cast<std::uint32_t>(kBounceFloats), seg.count - done);
      read_exact(bounce_.data(), n * sizeof(float));
      float* __restrict dst = seg.data + done;
      const float* __restrict src = bounce_.data();
      for (std::uint32_t i = 0; i < n; ++i) dst[i] += src[i];
      done += n;
    }
  }
  {
    std::lock_guard lock(mutex_);
    const auto seg_index = static_cast<std::uint32_t>(ring_mod(index, size_));
    if (h.half == kReduceScatter) {
      // Passed on to be added to, or (the last step) owned: its sum goes round.
      if (s + 1 < size_ - 1) sends_.push_back({h.bucket, kReduceScatter, static_cast<std::uint32_t>(s + 1), seg_index});
      else sends_.push_back({h.bucket, kAllgather, 0, seg_index});
    } else {
      if (s + 1 < size_ - 1) sends_.push_back({h.bucket, kAllgather, static_cast<std::uint32_t>(s + 1), seg_index});
      if (++gathered_[h.bucket] == size_ - 1 && ++complete_ == buckets_.size())
        busy_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - first_ready_).count();
    }
  }
  cv_.notify_all();
}

}  // namespace chaosbench::bench::train
