#include "bench/train/comm/hybrid_comm.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include "bench/common/elapsed.h"

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kPipelineTags = 1u << 30, kTpTag = 1u << 29, kWorldTag = 1u << 28;
constexpr std::uint32_t kPipelineIndexMask = (1u << 24) - 1;  // 2 × microbatch + direction


}  // namespace

std::uint32_t pipeline_tag(int microbatch, bool forward) {
  return kPipelineTags | static_cast<std::uint32_t>(2 * microbatch + (forward ? 0 : 1));
}

HybridComm::HybridComm(const ParallelLayout& layout, int rank, const std::string& store_spec,
                       const std::string& prefix, const std::string& host, std::chrono::milliseconds timeout,
                       std::size_t max_floats, std::shared_ptr<DeviceFaults> faults)
    : rank_(rank), world_size_(layout.world()), tp_group_(layout.tp_group(rank)),
      tp_index_(layout.coords(rank).tp_rank), faults_(std::move(faults)),
      store_(make_store(store_spec, prefix + "/links")) {
  const std::uint64_t max_floats_bytes = max_floats * sizeof(float);
  const std::uint64_t max_sum_bytes = static_cast<std::uint64_t>(world_size_) * sizeof(double);
  links_ = std::make_unique<PeerLinks>(
      store_->store(), "peer", rank, world_size_, host, timeout,
      [=](std::uint32_t tag, std::uint64_t bytes) {
        if (tag == kWorldTag) return bytes <= max_sum_bytes;
        const bool pipeline = (tag & ~kPipelineIndexMask) == kPipelineTags;
        return (tag == kTpTag || pipeline) && bytes <= max_floats_bytes;
      });
}

void HybridComm::tp_allreduce(float* data, std::size_t n) {
  const auto tp = tp_group_.size();
  if (tp < 2) return;
  if (faults_) faults_->collective();
  const auto t0 = Clock::now();
  for (int peer : tp_group_)
    if (peer != rank_) links_->send(peer, kTpTag, data, n * sizeof(float));
  parts_.resize(tp * n);
  std::copy_n(data, n, parts_.begin() + static_cast<std::ptrdiff_t>(tp_index_ * n));
  for (std::size_t t = 0; t < tp; ++t)
    if (static_cast<int>(t) != tp_index_) links_->recv(tp_group_[t], kTpTag, parts_.data() + t * n, n * sizeof(float));
  // In TP-rank order on every rank: the shards' copies of the summed tensor stay identical.
  std::copy_n(parts_.begin(), n, data);
  for (std::size_t t = 1; t < tp; ++t) {
    const float* part = parts_.data() + t * n;
    for (std::size_t i = 0; i < n; ++i) data[i] += part[i];
  }
  const double ms = ms_since(t0);
  traffic_.tp_ms += ms;
  traffic_.tp_bytes += n * sizeof(float);
  auto& calls = traffic_.tp_calls[n * sizeof(float)];
  calls.ms += ms;
  ++calls.count;
}

void HybridComm::send(const float* data, std::size_t n, int to_rank, std::uint32_t tag) {
  if (faults_) faults_->collective();
  const auto t0 = Clock::now();
  links_->send(to_rank, tag, data, n * sizeof(float));
  traffic_.pp_ms += ms_since(t0);
  traffic_.pp_bytes += n * sizeof(float);
}

void HybridComm::recv(float* data, std::size_t n, int from_rank, std::uint32_t tag) {
  const auto t0 = Clock::now();
  links_->recv(from_rank, tag, data, n * sizeof(float));
  traffic_.pp_ms += ms_since(t0);
}

void HybridComm::world_sum(std::vector<double>& values) {
  const std::size_t n = values.size(), bytes = n * sizeof(double);
  if (n > static_cast<std::size_t>(world_size_)) throw std::invalid_argument("HybridComm::world_sum: too many values");
  if (rank_ != 0) {
    links_->send(0, kWorldTag, values.data(), bytes);
    links_->recv(0, kWorldTag, values.data(), bytes);
    return;
  }
  sums_.assign(static_cast<std::size_t>(world_size_) * n, 0.0);
  std::copy(values.begin(), values.end(), sums_.begin());
  for (int peer = 1; peer < world_size_; ++peer)
    links_->recv(peer, kWorldTag, sums_.data() + static_cast<std::size_t>(peer) * n, bytes);
  std::fill(values.begin(), values.end(), 0.0);
  for (int r = 0; r < world_size_; ++r)
    for (std::size_t i = 0; i < n; ++i) values[i] += sums_[static_cast<std::size_t>(r) * n + i];
  for (int peer = 1; peer < world_size_; ++peer) links_->send(peer, kWorldTag, values.data(), bytes);
}

GroupTraffic HybridComm::take_traffic() {
  GroupTraffic out = traffic_;
  traffic_ = {};
  return out;
}

}  // namespace chaosbench::bench::train
