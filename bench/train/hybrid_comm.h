// The communication of one hybrid-parallel rank (issue 20) apart from the DP gradient
// reducer: gloo contexts over the whole world (the pipeline's point-to-point messages and
// the step's control sum) and over the rank's TP group (the layers' allreduces), with the
// time and bytes each kind took, for train/pipeline_bubble and comm/time{group}.
//
// Pipeline messages are gloo unbound buffers: send() posts and returns (gloo's TCP
// transport moves the bytes once the peer has posted its receive, so the buffer must stay
// untouched until then): release(buffer_id) waits for the send from that buffer, and
// comes before the caller writes into it again. recv() blocks. Messages are matched by
// (peer, slot): the caller gives every message of a step its own slot (pipeline_slot()).
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
  HybridComm(const ParallelLayout& layout, int rank, const std::string& store_spec, const std::string& prefix,
             const std::string& host, std::chrono::milliseconds timeout,
             std::shared_ptr<DeviceFaults> faults = nullptr);
  ~HybridComm();
  HybridComm(const HybridComm&) = delete;
  HybridComm& operator=(const HybridComm&) = delete;

  std::shared_ptr<gloo::transport::Device>& transport() { return transport_; }
  const std::shared_ptr<gloo::Context>& world() const { return world_; }

  // Sum of `n` floats over the TP group, in place (gloo's ring, as the collective
  // benchmark's "ring"). A no-op for tp 1.
  void tp_allreduce(float* data, std::size_t n);
  // `buffer_id` names the buffer `data` is in, for release(); one send at a time per id.
  void send(const float* data, std::size_t n, int to_rank, std::uint64_t slot, int buffer_id);
  void release(int buffer_id);
  void recv(float* data, std::size_t n, int from_rank, std::uint64_t slot);
  void wait_sends();
  // Sums `values` over the world, in place (the step's loss and stop flag).
  void world_sum(std::vector<double>& values);
  // Every rank of the world gets here before any leaves.
  void barrier();

  // What the calls above took since the last take.
  GroupTraffic take_traffic();

 private:
  std::chrono::milliseconds timeout_;
  std::shared_ptr<DeviceFaults> faults_;
  std::shared_ptr<gloo::transport::Device> transport_;
  std::unique_ptr<RendezvousStore> world_store_, tp_store_;
  std::shared_ptr<gloo::Context> world_, tp_;
  std::map<int, std::unique_ptr<gloo::transport::UnboundBuffer>> pending_;  // buffer_id -> send in flight
  GroupTraffic traffic_;
};

}  // namespace chaosbench::bench::train
