#include "bench/train/hybrid_comm.h"

#include <utility>

#include <fmt/format.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include "bench/common/thread_priority.h"

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;
// Tags apart from the DP reducer's (its own contexts) and from each other.
constexpr std::uint32_t kTpTag = 700, kWorldTag = 701, kBarrierTag = 702;
// gloo's collectives build their slots with prefixes 0x01..0x08 (gloo/types.h).
constexpr std::uint8_t kPipelineSlotPrefix = 0x40;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::shared_ptr<gloo::Context> connect(RendezvousStore& store, int rank, int size,
                                       std::shared_ptr<gloo::transport::Device> transport,
                                       std::chrono::milliseconds timeout) {
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(timeout);
  context->connectFullMesh(store.store(), transport);
  return context;
}

}  // namespace

HybridComm::HybridComm(const ParallelLayout& layout, int rank, const std::string& store_spec,
                       const std::string& prefix, const std::string& host, std::chrono::milliseconds timeout,
                       std::shared_ptr<DeviceFaults> faults)
    : timeout_(timeout), faults_(std::move(faults)) {
  gloo::transport::tcp::attr attr;
  attr.hostname = host;
  {
    const ScopedThreadNice nice(kCommThreadNice);  // gloo's transport thread moves the bytes
    transport_ = gloo::transport::tcp::CreateDevice(attr);
  }
  world_store_ = make_store(store_spec, prefix + "/world");
  world_ = connect(*world_store_, rank, layout.world(), transport_, timeout);
  if (layout.dims().tp > 1) {
    const auto c = layout.coords(rank);
    const int index = c.dp_rank + layout.dims().dp * c.pp_stage;
    tp_store_ = make_store(store_spec, fmt::format("{}/tp{}", prefix, index));
    tp_ = connect(*tp_store_, c.tp_rank, layout.dims().tp, transport_, timeout);
  }
}

HybridComm::~HybridComm() {
  try {
    wait_sends();
  } catch (const std::exception&) {  // a peer gone: nothing left to deliver to
  }
  pending_.clear();
  tp_.reset();
  world_.reset();
}

void HybridComm::tp_allreduce(float* data, std::size_t n) {
  if (!tp_) return;
  if (faults_) faults_->collective();
  const auto t0 = Clock::now();
  gloo::AllreduceOptions opts(tp_);
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  opts.setOutput(data, n);
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));
  opts.setTag(kTpTag);
  opts.setTimeout(timeout_);
  gloo::allreduce(opts);
  const double ms = ms_since(t0);
  traffic_.tp_ms += ms;
  traffic_.tp_bytes += n * sizeof(float);
  auto& calls = traffic_.tp_calls[n * sizeof(float)];
  calls.ms += ms;
  ++calls.count;
}

std::uint64_t pipeline_slot(int microbatch, bool forward) {
  return gloo::Slot::build(kPipelineSlotPrefix, static_cast<std::uint32_t>(2 * microbatch + (forward ? 0 : 1)));
}

void HybridComm::release(int buffer_id) {
  const auto it = pending_.find(buffer_id);
  if (it == pending_.end() || !it->second) return;
  const auto t0 = Clock::now();
  it->second->waitSend(timeout_);
  it->second.reset();
  traffic_.pp_ms += ms_since(t0);
}

void HybridComm::send(const float* data, std::size_t n, int to_rank, std::uint64_t slot, int buffer_id) {
  if (faults_) faults_->collective();
  release(buffer_id);
  auto& pending = pending_[buffer_id];
  // gloo's unbound buffers take a non-const pointer; a send only reads it.
  pending = world_->createUnboundBuffer(const_cast<float*>(data), n * sizeof(float));
  pending->send(to_rank, slot);
  traffic_.pp_bytes += n * sizeof(float);
}

void HybridComm::recv(float* data, std::size_t n, int from_rank, std::uint64_t slot) {
  const auto t0 = Clock::now();
  auto buffer = world_->createUnboundBuffer(data, n * sizeof(float));
  buffer->recv(from_rank, slot);
  buffer->waitRecv(timeout_);
  traffic_.pp_ms += ms_since(t0);
}

void HybridComm::wait_sends() {
  const auto t0 = Clock::now();
  for (auto& [id, pending] : pending_) {
    if (pending) pending->waitSend(timeout_);
    pending.reset();
  }
  traffic_.pp_ms += ms_since(t0);
}

void HybridComm::world_sum(std::vector<double>& values) {
  gloo::AllreduceOptions opts(world_);
  opts.setOutput(values.data(), values.size());
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<double>));
  opts.setTag(kWorldTag);
  opts.setTimeout(timeout_);
  gloo::allreduce(opts);
}

void HybridComm::barrier() {
  gloo::BarrierOptions opts(world_);
  opts.setTag(kBarrierTag);
  opts.setTimeout(timeout_);
  gloo::barrier(opts);
}

GroupTraffic HybridComm::take_traffic() {
  GroupTraffic out = traffic_;
  traffic_ = {};
  return out;
}

}  // namespace chaosbench::bench::train
