// The optimizers: state buffers on the device, zeroed (PyTorch's initial state), and one
// device call per step over the whole flat parameter buffer.
#include "bench/compute/optimizer.h"

#include <stdexcept>
#include <utility>

namespace chaosbench::bench::train {

Optimizer::Optimizer(Device& device, OptimizerConfig config, std::size_t n)
    : device_(device), config_(std::move(config)), n_(n) {
  std::vector<std::string> names;
  if (config_.kind == "sgd") {
    names = {"momentum"};
  } else if (config_.kind == "adamw") {
    names = {"exp_avg", "exp_avg_sq"};
  } else {
    throw std::invalid_argument("Optimizer: unknown kind '" + config_.kind + "' (sgd, adamw)");
  }
  state_.reserve(names.size());
  try {
    for (auto& name : names) state_.push_back({std::move(name), device_.allocate(n_)});
  } catch (...) {
    for (const auto& buffer : state_) device_.release(buffer.data);
    throw;
  }
}

Optimizer::~Optimizer() {
  for (const auto& buffer : state_) device_.release(buffer.data);
}

void Optimizer::step(float* params, const float* grads, float grad_scale) {
  begin_step();  // AdamW's bias correction needs t >= 1 on the first step
  update(params, grads, grad_scale, 0, n_);
}

void Optimizer::update(float* params, const float* grads, float grad_scale, std::size_t offset, std::size_t count) {
  if (offset > n_ || count > n_ - offset) throw std::out_of_range("Optimizer::update: range outside the parameters");
  const OptimizerConfig& c = config_;
  if (state_.size() == 1) {  // sgd: "momentum"
    device_.sgd_momentum(params + offset, grads + offset, state_[0].data + offset, count, c.lr, c.momentum,
                         c.weight_decay, grad_scale);
  } else {  // adamw: "exp_avg", "exp_avg_sq"
    device_.adamw(params + offset, grads + offset, state_[0].data + offset, state_[1].data + offset, count, c.lr,
                  c.beta1, c.beta2, c.eps, c.weight_decay, steps_, grad_scale);
  }
}

}  // namespace chaosbench::bench::train
