// Allreduce (sum of float32 over all ranks). "ring" is gloo's new-API gloo::allreduce with
// the RING algorithm, out of place so the input never changes between iterations;
// "halving_doubling" is the old-API gloo::AllreduceHalvingDoubling, which works in place.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/math.h>

#include "bench/collective/collective_op.h"

namespace chaosbench::bench {
namespace {

void fill_inputs(std::vector<float>& v, int rank) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = input_value(rank, i);
}

std::uint64_t count_wrong_sums(const std::vector<float>& out, int ranks) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != sum_over_ranks(ranks, i)) ++wrong;
  }
  return wrong;
}

class AllreduceRingOp final : public CollectiveOp {
 public:
  AllreduceRingOp(const std::shared_ptr<gloo::Context>& context, std::size_t elements)
      : ranks_(context->size), in_(elements), out_(elements), opts_(context) {
    fill_inputs(in_, context->rank);
    opts_.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    opts_.setInput(in_.data(), elements);
    opts_.setOutput(out_.data(), elements);
    // gloo::sum<float> has the void* signature AllreduceOptions expects; the cast picks
    // that overload out of the two templates.
    opts_.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));
  }

  void run() override { gloo::allreduce(opts_); }
  void prepare_check() override { std::fill(out_.begin(), out_.end(), kPoison); }
  std::uint64_t wrong_elements() const override { return count_wrong_sums(out_, ranks_); }

 private:
  int ranks_;
  std::vector<float> in_;
  std::vector<float> out_;
  gloo::AllreduceOptions opts_;
};

class AllreduceHalvingDoublingOp final : public CollectiveOp {
 public:
  AllreduceHalvingDoublingOp(const std::shared_ptr<gloo::Context>& context,
                             std::size_t elements)
      : ranks_(context->size), pristine_(elements), data_(elements) {
    fill_inputs(pristine_, context->rank);
    data_ = pristine_;
    // Builds its buffers and reserves its slots now, identically on every rank.
    algo_ = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(
        context, std::vector<float*>{data_.data()}, static_cast<int>(elements));
  }

  bool in_place() const override { return true; }
  void reset_inputs() override {
    std::memcpy(data_.data(), pristine_.data(), data_.size() * sizeof(float));
  }
  void run() override { algo_->run(); }
  // In place: the fresh input is also the output, so there is nothing to poison.
  void prepare_check() override { reset_inputs(); }
  std::uint64_t wrong_elements() const override { return count_wrong_sums(data_, ranks_); }

 private:
  int ranks_;
  std::vector<float> pristine_;
  std::vector<float> data_;
  std::unique_ptr<gloo::AllreduceHalvingDoubling<float>> algo_;
};

}  // namespace

std::unique_ptr<CollectiveOp> make_allreduce_op(std::string_view algorithm,
                                                const std::shared_ptr<gloo::Context>& context,
                                                std::size_t elements) {
  if (algorithm == "ring") return std::make_unique<AllreduceRingOp>(context, elements);
  if (algorithm == "halving_doubling") {
    return std::make_unique<AllreduceHalvingDoublingOp>(context, elements);
  }
  throw std::invalid_argument("allreduce: unknown algorithm \"" + std::string(algorithm) + "\"");
}

}  // namespace chaosbench::bench
