// The gradient allreduce on TCP connections of its own (workload.algorithm "tcp_ring"):
// a ring in two halves, reduce-scatter then allgather, over one connection to the next
// rank and one from the previous; gloo stays the control plane. Why it exists, how its
// messages are placed and how it fails: docs/train-comm.md.
//
// Contract: the buckets, extras and call order of GradientAllreducer (grad_allreducer.h).
// finish() throws CollectiveError when a peer closes its connection, a connection the
// step waits on makes no progress for `timeout`, or a stream goes out of step; an injected
// collective.error is rethrown as its DeviceError, and collective.hang holds the step
// (finish() does not return, as a hung library call would not). After any of these the
// reducer is unusable: destroy it (the destructor shuts both connections and joins).
// Threads: begin_step, layer_done and finish from one compute thread; a sender and a
// receiver thread of its own, at the communication priority, denormals flushed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "bench/common/device_faults.h"
#include "bench/train/comm/grad_allreducer.h"
#include "bench/train/comm/gradient_reducer.h"

namespace chaosbench::bench::train {

class TcpRingReducer final : public GradientReducer {
 public:
  // Listens on `host` (port chosen by the kernel), publishes the address in `store` under
  // "<key>/<rank>", connects to rank + 1 and accepts rank - 1 (mod size), all within
  // `timeout`. Throws CollectiveError when the ring cannot be formed.
  TcpRingReducer(gloo::rendezvous::Store& store, const std::string& key, int rank, int size, const std::string& host,
                 float* grads, const std::vector<LayerSpan>& spans, std::uint64_t bucket_bytes,
                 std::chrono::milliseconds timeout, std::size_t extras, std::size_t tail,
                 std::shared_ptr<DeviceFaults> faults = nullptr);
  ~TcpRingReducer() override;
  TcpRingReducer(const TcpRingReducer&) = delete;
  TcpRingReducer& operator=(const TcpRingReducer&) = delete;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  void begin_step(const std::vector<float>& extras) override;
  void layer_done(int layer) override;
  StepComm finish() override;  // throws CollectiveError (or the injected DeviceError)
  // Buckets are handed over as their allgather completes (gradient_reducer.h).
  bool finish_each(const std::function<bool(const std::vector<float>&)>& accept,
                   const std::function<void(std::size_t, std::size_t)>& use, StepComm& out) override;

 private:
  struct Segment {
    float* data;
    std::uint32_t count;
  };
  struct Send {
    std::uint32_t bucket, half, ring_step, segment;
  };

  Segment segment(std::size_t bucket, int index);  // index mod size
  void connect_ring(gloo::rendezvous::Store& store, const std::string& key, const std::string& host);
  void send_loop();
  void receive_loop();
  void receive_one();
  void fail(const std::string& error, std::exception_ptr library = nullptr);  // under no lock
  bool bucket_done(std::size_t bucket) const;  // under mutex_
  // Waits (under `lock`) until `done` or an error, which it throws; returns the ms waited.
  double wait_for(std::unique_lock<std::mutex>& lock, const std::function<bool()>& done);
  std::vector<float> extras_out();             // the summed extras; bucket 0 copied back first
  void read_exact(void* dst, std::size_t bytes);
  void write_message(const Send& s);

  int rank_, size_;
  float* grads_;
  std::vector<Bucket> buckets_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<DeviceFaults> faults_;
  std::size_t extras_;
  float* extras_at_ = nullptr;  // after bucket 0 in grads_, or in staged_
  std::vector<float> staged_;   // bucket 0 and the extras, when the buffer has no room
  int send_fd_ = -1, recv_fd_ = -1;
  std::vector<float> bounce_;   // receiver: a reduce-scatter payload, 64 KiB at a time

  std::mutex mutex_;
  std::condition_variable cv_;
  // Under mutex_:
  std::uint32_t step_ = 0;          // step number, in every header
  bool active_ = false;             // between begin_step and finish's return
  std::size_t ready_ = 0;           // buckets backward has finished (compute thread's count)
  std::size_t next_bucket_ = 0;     // compute thread: the next bucket to announce
  std::deque<Send> sends_;          // the sender's queue
  std::size_t sending_ = 0;         // messages taken by the sender and not yet written
  std::vector<int> gathered_;       // per bucket: allgather messages received
  std::size_t complete_ = 0;        // buckets with every allgather message received
  std::chrono::steady_clock::time_point first_ready_;
  double busy_ms_ = 0;              // first bucket ready -> last bucket complete
  std::string error_;
  std::exception_ptr error_library_;
  bool stop_ = false;
  std::vector<int> expected_;      // receiver only: per bucket, the index of the next message
  std::atomic<bool> held_{false};  // the sender is inside DeviceFaults::collective()
  std::thread sender_, receiver_;
};

}  // namespace chaosbench::bench::train
