// The training data: a deterministic synthetic regression set. Inputs are standard
// normal vectors; targets are what a fixed random "teacher" MLP (input -> hidden (tanh)
// -> output, outputs scaled to unit variance) gives for them, plus Gaussian noise of
// `noise_std`. Sample i depends only on (seed, i), so any rank regenerates any batch and
// the best possible mean squared error (the loss floor) is noise_std^2.
// Threads: const methods may be called from any thread.
#pragma once

#include <cstdint>
#include <vector>

namespace chaosbench::bench::train {

class SyntheticDataset {
 public:
  SyntheticDataset(int input_dim, int output_dim, std::uint64_t seed, float noise_std = 0.1f, int teacher_hidden = 64);

  int input_dim() const { return input_dim_; }
  int output_dim() const { return output_dim_; }
  // Host buffers: x [count x input_dim], y [count x output_dim], for samples
  // first .. first+count-1.
  void batch(std::uint64_t first, int count, float* x, float* y) const;
  // The inputs alone (the same x as batch()), without the teacher's work: what a
  // pipeline's first stage reads.
  void inputs(std::uint64_t first, int count, float* x) const;
  double loss_floor() const { return static_cast<double>(noise_std_) * noise_std_; }

 private:
  int input_dim_, output_dim_, hidden_;
  std::uint64_t seed_;
  float noise_std_;
  std::vector<float> w1_, b1_, w2_;  // the teacher; w1_ stored [in x hidden], w2_ [hidden x out]
  float out_scale_ = 1.0f;

  // Noiseless targets y [count x output_dim] for inputs x [count x input_dim].
  void teacher(const float* x, int count, float* y) const;
};

}  // namespace chaosbench::bench::train
