// The trainer's state as one unit: the model's parameters, the optimizer's buffers and
// the step. Copies it between the device and a CheckpointState (host buffers named
// "params", then the optimizer's names), and sends it from one rank to the others of a
// gloo context (elastic recovery and admission).
// Threads: the compute thread only, with the communication thread idle.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <gloo/context.h>

#include "bench/checkpoint/checkpoint_state.h"
#include "bench/compute/mlp_model.h"
#include "bench/compute/optimizer.h"

namespace chaosbench::bench::train {

class TrainState {
 public:
  TrainState(Device& device, MlpModel& model, Optimizer& optimizer, std::string model_key)
      : TrainState(device, model.params(), model.param_count(), optimizer, std::move(model_key)) {}
  // The state of any model whose parameters are one flat device buffer (a pipeline
  // stage's shard, stage_model.h).
  TrainState(Device& device, float* params, std::size_t param_count, Optimizer& optimizer, std::string model_key);

  const std::string& model_key() const { return key_; }
  // Fills `out` (reusing its buffers) with the state at `step`.
  void snapshot(std::int64_t step, CheckpointState& out) const;
  // Loads `state` onto the device. Throws std::runtime_error when its key or buffer sizes
  // do not match this model.
  void restore(const CheckpointState& state);
  // Every rank of `context` leaves with the state of rank `root`; returns root's step.
  // Throws what gloo throws (a peer died, the timeout passed).
  std::int64_t broadcast(const std::shared_ptr<gloo::Context>& context, int root, std::int64_t step,
                         std::chrono::milliseconds timeout);

 private:
  Device& device_;
  float* params_;
  std::size_t param_count_;
  Optimizer& optimizer_;
  std::string key_;
};

}  // namespace chaosbench::bench::train
