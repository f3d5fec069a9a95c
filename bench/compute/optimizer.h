// Optimizers over one flat parameter buffer: SGD with momentum and AdamW (device.h gives
// the exact update rules). Their state buffers are named, so checkpoints and the elastic
// state transfer move them without knowing which optimizer runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/compute/device.h"

namespace chaosbench::bench::train {

struct OptimizerConfig {
  std::string kind = "sgd";  // "sgd" (with momentum) or "adamw"
  float lr = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
};

struct StateBuffer {
  std::string name;  // "momentum"; "exp_avg", "exp_avg_sq"
  float* data;       // device buffer of the optimizer's size
};

class Optimizer {
 public:
  // Throws std::invalid_argument for an unknown kind.
  Optimizer(Device& device, OptimizerConfig config, std::size_t n);
  ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of params from grads (grads multiplied by grad_scale first); increments
  // steps(). The same as begin_step() and then update() over every element.
  void step(float* params, const float* grads, float grad_scale);
  // A step in pieces: begin_step() once, then update() for ranges that together cover
  // every element once, in any order (the rules are elementwise: the same bits as step()).
  void begin_step() { ++steps_; }
  void update(float* params, const float* grads, float grad_scale, std::size_t offset, std::size_t count);
  std::int64_t steps() const { return steps_; }
  void set_steps(std::int64_t s) { steps_ = s; }  // after a restore
  const std::vector<StateBuffer>& state() const { return state_; }
  std::size_t size() const { return n_; }
  const OptimizerConfig& config() const { return config_; }

 private:
  Device& device_;
  OptimizerConfig config_;
  std::size_t n_;
  std::int64_t steps_ = 0;
  std::vector<StateBuffer> state_;
};

}  // namespace chaosbench::bench::train
