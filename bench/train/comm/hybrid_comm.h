// The communication of one hybrid-parallel rank apart from the DP gradient
// reducer, on the rank's point-to-point links (peer_links.h): the pipeline's activations
// and gradients, the TP group's allreduces and the step's world sum, with the time and
// bytes each kind took, for train/pipeline_bubble and comm/time{group}.
// Failures: CollectiveError from the links (a peer gone, the timeout passed) propagates;
// the caller treats it as a collective failure. Injected collective faults
// (DeviceFaults::collective: collective.error throws the DeviceError, collective.hang
// blocks) act before every TP allreduce and pipeline send, as NCCL's would in its calls.
// Threads: the rank's compute thread only (the links have their receiver).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/rendezvous/rendezvous.h"
#include "bench/common/device_faults.h"
#include "bench/train/hybrid/parallel_layout.h"
#include "bench/train/comm/peer_links.h"

namespace chaosbench::bench::train {

// The tag of a pipeline message: microbatch `microbatch`'s activations (forward) or their
// gradient.
std::uint32_t pipeline_tag(int microbatch, bool forward);

struct GroupTraffic {
  double tp_ms = 0, pp_ms = 0;             // in TP allreduces; sending and waiting on pipeline messages
  std::uint64_t tp_bytes = 0, pp_bytes = 0;  // payload handed to them (TP: allreduced; PP: sent)
  struct Calls {
    double ms = 0;
    int count = 0;
  };
  std::map<std::size_t, Calls> tp_calls;  // per message size in bytes: the TP allreduces' time
};

class HybridComm {
 public:
  // Links the world through `store_spec` under `prefix` (unique per run attempt). Blocks
  // until every rank has connected or `timeout`. `max_floats`: the largest pipeline or TP
  // message (a peer's longer message breaks its link).
  HybridComm(const ParallelLayout& layout, int rank, const std::string& store_spec, const std::string& prefix,
             const std::string& host, std::chrono::milliseconds timeout, std::size_t max_floats,
             std::shared_ptr<DeviceFaults> faults = nullptr);

  // Sum of `n` floats over the TP group, in place: a direct exchange (every rank sends its
  // part to every other and sums the parts in TP-rank order, so all get the same bits in
  // one message round, the latency-bound case TP's small messages are; gloo's ring takes
  // 2(tp − 1) rounds and sends less only from tp 3 on). A no-op for tp 1.
  void tp_allreduce(float* data, std::size_t n);
  void send(const float* data, std::size_t n, int to_rank, std::uint32_t tag);
  void recv(float* data, std::size_t n, int from_rank, std::uint32_t tag);
  // Sums `values` (at most the world's size) over the world, in place: rank 0 gathers
  // them, sums in rank order and sends the sum back, so every rank gets the same bits in
  // 2 (world − 1) messages. The step's loss and stop flag, or the ranks' checkpoint steps.
  // Every rank makes the same calls in the same order; one with no values is a barrier.
  void world_sum(std::vector<double>& values);

  // What the calls above took since the last take.
  GroupTraffic take_traffic();

 private:
  int rank_, world_size_;
  std::vector<int> tp_group_;  // world ranks, in TP-rank order
  int tp_index_ = 0;
  std::shared_ptr<DeviceFaults> faults_;
  std::unique_ptr<RendezvousStore> store_;
  std::unique_ptr<PeerLinks> links_;
  std::vector<float> parts_;
  std::vector<double> sums_;
  GroupTraffic traffic_;
};

}  // namespace chaosbench::bench::train
