#include "bench/train/train_state.h"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <gloo/broadcast.h>

namespace chaosbench::bench::train {
namespace {

// Apart from the gradient buckets' tags (grad_allreducer.cc).
constexpr std::uint32_t kStateTag = 500;

}  // namespace

TrainState::TrainState(Device& device, float* params, std::size_t param_count, Optimizer& optimizer,
                       std::string model_key)
    : device_(device), params_(params), param_count_(param_count), optimizer_(optimizer), key_(std::move(model_key)) {}

void TrainState::snapshot(std::int64_t step, CheckpointState& out) const {
  out.step = step;
  out.model_key = key_;
  const std::size_t n = param_count_;
  out.buffers.resize(1 + optimizer_.state().size());
  out.buffers[0].first = "params";
  out.buffers[0].second.resize(n);
  device_.to_host(out.buffers[0].second.data(), params_, n);
  for (std::size_t i = 0; i < optimizer_.state().size(); ++i) {
    auto& [name, data] = out.buffers[i + 1];
    name = optimizer_.state()[i].name;
    data.resize(optimizer_.size());
    device_.to_host(data.data(), optimizer_.state()[i].data, optimizer_.size());
  }
}

void TrainState::restore(const CheckpointState& state) {
  if (state.model_key != key_)
    throw std::runtime_error(fmt::format("checkpoint is of \"{}\", this model is \"{}\"", state.model_key, key_));
  auto find = [&](const std::string& name, std::size_t n) -> const std::vector<float>& {
    for (const auto& [k, v] : state.buffers) {
      if (k != name) continue;
      if (v.size() != n)
        throw std::runtime_error(fmt::format("checkpoint buffer \"{}\" has {} elements, expected {}", name, v.size(), n));
      return v;
    }
    throw std::runtime_error(fmt::format("checkpoint lacks buffer \"{}\"", name));
  };
  const auto& params = find("params", param_count_);
  device_.from_host(params_, params.data(), params.size());
  for (const auto& b : optimizer_.state()) {
    const auto& v = find(b.name, optimizer_.size());
    device_.from_host(b.data, v.data(), v.size());
  }
  optimizer_.set_steps(state.step);
}

std::int64_t TrainState::broadcast(const std::shared_ptr<gloo::Context>& context, int root, std::int64_t step,
                                   std::chrono::milliseconds timeout) {
  auto send = [&](auto* data, std::size_t n) {
    gloo::BroadcastOptions opts(context);
    opts.setRoot(root);
    opts.setOutput(data, n);
    opts.setTag(kStateTag);
    opts.setTimeout(timeout);
    gloo::broadcast(opts);
  };
  std::int64_t s = step;
  send(&s, 1);
  // Host staging: gloo moves host memory, and a device buffer may not be host memory.
  std::vector<float> host(param_count_);
  device_.to_host(host.data(), params_, host.size());
  send(host.data(), host.size());
  device_.from_host(params_, host.data(), host.size());
  host.resize(optimizer_.size());
  for (const auto& b : optimizer_.state()) {
    device_.to_host(host.data(), b.data, host.size());
    send(host.data(), host.size());
    device_.from_host(b.data, host.data(), host.size());
  }
  optimizer_.set_steps(s);
  return s;
}

}  // namespace chaosbench::bench::train
