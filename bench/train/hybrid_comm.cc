#include "bench/train/hybrid_comm.h"

#include <algorithm>
#include <stdexcept>
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
constexpr std::uint8_t kPipelineSlotPrefix = 0x40, kWorldSumSlotPrefix = 0x41;

std::uint64_t world_slot(int parity) { return gloo::Slot::build(kWorldSumSlotPrefix, static_cast<std::uint32_t>(parity)); }

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
                       std::size_t sum_values, std::shared_ptr<DeviceFaults> faults)
    : rank_(rank), world_size_(layout.world()), timeout_(timeout), faults_(std::move(faults)),
      sum_values_(std::max<std::size_t>(sum_values, 1)) {
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
  for (auto& sums : sums_) sums.assign(static_cast<std::size_t>(world_size_) * sum_values_, 0.0);
  sum_out_.assign(sum_values_, 0.0);
  sum_send_ = world_->createUnboundBuffer(sum_out_.data(), sum_values_ * sizeof(double));
  // Before any peer can send its first sum: they first need this rank's connection.
  post_world_receives(0);
}

void HybridComm::post_world_receives(int parity) {
  auto& receives = sum_receives_[parity];
  receives.clear();
  for (int r = 0; r < world_size_; ++r) {
    if (r == rank_) {
      receives.emplace_back();
      continue;
    }
    double* at = sums_[parity].data() + static_cast<std::size_t>(r) * sum_values_;
    receives.push_back(world_->createUnboundBuffer(at, sum_values_ * sizeof(double)));
    receives.back()->recv(r, world_slot(parity));
  }
}

HybridComm::~HybridComm() {
  try {
    wait_sends();
  } catch (const std::exception&) {  // a peer gone: nothing left to deliver to
  }
  // The contexts first: closing their connections fails the receives still posted, which
  // must exist until then.
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

void HybridComm::post_recv(float* data, std::size_t n, int from_rank, std::uint64_t slot, int recv_id) {
  auto& buffer = receives_[recv_id];
  buffer = world_->createUnboundBuffer(data, n * sizeof(float));
  buffer->recv(from_rank, slot);
}

void HybridComm::wait_recv(int recv_id) {
  const auto it = receives_.find(recv_id);
  if (it == receives_.end() || !it->second) throw std::logic_error("HybridComm::wait_recv: nothing posted");
  const auto t0 = Clock::now();
  it->second->waitRecv(timeout_);
  it->second.reset();
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
  if (values.size() > sum_values_) throw std::invalid_argument("HybridComm::world_sum: too many values");
  const int parity = sum_calls_++ % 2;
  post_world_receives(1 - parity);  // the next call's, before anyone can send it
  std::fill(sum_out_.begin(), sum_out_.end(), 0.0);
  std::copy(values.begin(), values.end(), sum_out_.begin());
  for (int r = 0; r < world_size_; ++r)
    if (r != rank_) sum_send_->send(r, world_slot(parity));
  for (int r = 0; r < world_size_; ++r)
    if (r != rank_) sum_send_->waitSend(timeout_);
  std::copy(sum_out_.begin(), sum_out_.end(), sums_[parity].begin() + static_cast<std::ptrdiff_t>(rank_) * sum_values_);
  for (int r = 0; r < world_size_; ++r)
    if (r != rank_) sum_receives_[parity][static_cast<std::size_t>(r)]->waitRecv(timeout_);
  // In rank order on every rank, so that all get the same bits.
  std::fill(values.begin(), values.end(), 0.0);
  for (int r = 0; r < world_size_; ++r) {
    const double* from = sums_[parity].data() + static_cast<std::size_t>(r) * sum_values_;
    for (std::size_t i = 0; i < values.size(); ++i) values[i] += from[i];
  }
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
