// Reduce-scatter (sum) with gloo's old-API gloo::ReduceScatterHalvingDoubling. It works in
// place on the full input and leaves rank r's block (recvElems[r] floats, the sums at
// offsets r*share ...) at the *start* of the buffer; the rest of the buffer is scratch.
#include <cstring>
#include <vector>

#include <gloo/reduce_scatter.h>

#include "bench/collective/collective_op.h"

namespace chaosbench::bench {
namespace {

class ReduceScatterOp final : public CollectiveOp {
 public:
  ReduceScatterOp(const std::shared_ptr<gloo::Context>& context, std::size_t elements)
      : rank_(context->rank),
        ranks_(context->size),
        share_(elements / static_cast<std::size_t>(context->size)),
        pristine_(elements),
        data_(elements) {
    for (std::size_t i = 0; i < elements; ++i) pristine_[i] = input_value(rank_, i);
    data_ = pristine_;
    algo_ = std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
        context, std::vector<float*>{data_.data()}, static_cast<int>(elements),
        std::vector<int>(static_cast<std::size_t>(ranks_), static_cast<int>(share_)));
  }

  bool in_place() const override { return true; }
  void reset_inputs() override {
    std::memcpy(data_.data(), pristine_.data(), data_.size() * sizeof(float));
  }
  void run() override { algo_->run(); }
  void prepare_check() override { reset_inputs(); }
  std::uint64_t wrong_elements() const override {
    std::uint64_t wrong = 0;
    const std::size_t offset = static_cast<std::size_t>(rank_) * share_;
    for (std::size_t k = 0; k < share_; ++k) {
      if (data_[k] != sum_over_ranks(ranks_, offset + k)) ++wrong;
    }
    return wrong;
  }

 private:
  int rank_;
  int ranks_;
  std::size_t share_;
  std::vector<float> pristine_;
  std::vector<float> data_;
  std::unique_ptr<gloo::ReduceScatterHalvingDoubling<float>> algo_;
};

}  // namespace

std::unique_ptr<CollectiveOp> make_reduce_scatter_op(
    const std::shared_ptr<gloo::Context>& context, std::size_t elements) {
  return std::make_unique<ReduceScatterOp>(context, elements);
}

}  // namespace chaosbench::bench
