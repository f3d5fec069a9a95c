// The communication of one hybrid-parallel rank (issue 20) apart from the DP gradient
// reducer: gloo contexts over the whole world (the pipeline's point-to-point messages and
// the step's control sum) and over the rank's TP group (the layers' allreduces), with the
// time and bytes each kind took, for train/pipeline_bubble and comm/time{group}.
//
// Receives are posted before the peer can send. Why: gloo's TCP transport sends an
// unbound buffer eagerly, and a message whose receive is not posted yet stays in the
// socket while the transport's event loop, level-triggered, wakes for it again and again:
// a core spun away, on a machine where the ranks share the cores. So the pipeline's
// receives of a step are posted (post_recv) before the step's sends can start, and
// world_sum() keeps the next call's receives posted before it sends (two sets of
// buffers, by the parity of the call).
//
// send() posts and returns (the buffer must stay untouched until its peer has taken it):
// release(buffer_id) waits for the send from that buffer, and comes before the caller
// writes into it again. Messages are matched by (peer, slot): the caller gives every
// message of a step its own slot (pipeline_slot()).
// Failures: every wait has the rank's timeout; gloo's exceptions (a peer gone, a timeout)
// propagate as they are: the caller treats them as a collective failure. Injected
// collective faults (DeviceFaults::collective: collective.error throws the DeviceError,
// collective.hang blocks) act before every TP allreduce and pipeline send, as NCCL's
// would in its calls.
// Threads: the rank's compute thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gloo/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "bench/collective/rendezvous.h"
#include "bench/common/device_faults.h"
#include "bench/train/parallel_layout.h"

namespace chaosbench::bench::train {

// The gloo slot of a pipeline message: microbatch `microbatch`'s activations (forward) or
// their gradient, apart from the slots gloo's collectives build.
std::uint64_t pipeline_slot(int microbatch, bool forward);

struct GroupTraffic {
  double tp_ms = 0, pp_ms = 0;             // in TP allreduces; waiting on pipeline messages
  std::uint64_t tp_bytes = 0, pp_bytes = 0;  // payload handed to them (TP: allreduced; PP: sent)
  struct Calls {
    double ms = 0;
    int count = 0;
  };
  std::map<std::size_t, Calls> tp_calls;  // per message size in bytes: the TP allreduces' time
};

class HybridComm {
 public:
  // Connects the world and (tp > 1) the TP group through `store_spec` under `prefix`
  // (unique per run attempt). Blocks until every rank of both has connected or `timeout`.
  // world_sum() carries at most `sum_values` doubles.
  HybridComm(const ParallelLayout& layout, int rank, const std::string& store_spec, const std::string& prefix,
             const std::string& host, std::chrono::milliseconds timeout, std::size_t sum_values,
             std::shared_ptr<DeviceFaults> faults = nullptr);
  ~HybridComm();
  HybridComm(const HybridComm&) = delete;
  HybridComm& operator=(const HybridComm&) = delete;

  std::shared_ptr<gloo::transport::Device>& transport() { return transport_; }

  // Sum of `n` floats over the TP group, in place (gloo's ring, as the collective
  // benchmark's "ring"). A no-op for tp 1.
  void tp_allreduce(float* data, std::size_t n);
  // `buffer_id` names the buffer `data` is in, for release(); one send at a time per id.
  void send(const float* data, std::size_t n, int to_rank, std::uint64_t slot, int buffer_id);
  void release(int buffer_id);
  void wait_sends();
  // A receive into `data` (n floats from `from_rank`'s message in `slot`), posted now and
  // waited for by wait_recv(recv_id). One posted receive per id at a time.
  void post_recv(float* data, std::size_t n, int from_rank, std::uint64_t slot, int recv_id);
  void wait_recv(int recv_id);
  // Sums `values` (at most sum_values) over the world, in place: every rank's step loss and
  // stop flag, or its checkpoint step. Every rank makes the same calls in the same order.
  void world_sum(std::vector<double>& values);
  // Every rank of the world gets here before any leaves.
  void barrier();

  // What the calls above took since the last take.
  GroupTraffic take_traffic();

 private:
  void post_world_receives(int parity);

  int rank_, world_size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<DeviceFaults> faults_;
  std::shared_ptr<gloo::transport::Device> transport_;
  std::unique_ptr<RendezvousStore> world_store_, tp_store_;
  std::shared_ptr<gloo::Context> world_, tp_;
  std::map<int, std::unique_ptr<gloo::transport::UnboundBuffer>> pending_;  // buffer_id -> send in flight
  std::map<int, std::unique_ptr<gloo::transport::UnboundBuffer>> receives_;  // recv_id -> posted receive
  // world_sum: per parity, a message of sum_values doubles from every rank (its own too).
  std::size_t sum_values_;
  std::vector<double> sums_[2];
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> sum_receives_[2];
  std::unique_ptr<gloo::transport::UnboundBuffer> sum_send_;
  std::vector<double> sum_out_;
  int sum_calls_ = 0;
  GroupTraffic traffic_;
};

}  // namespace chaosbench::bench::train
