// Allgather with gloo's new-API gloo::allgather (a ring), out of place: each rank
// contributes elements/ranks floats and receives the whole gathered buffer.
#include <algorithm>
#include <vector>

#include <gloo/allgather.h>

#include "bench/collective/collective_op.h"

namespace chaosbench::bench {
namespace {

class AllgatherOp final : public CollectiveOp {
 public:
  AllgatherOp(const std::shared_ptr<gloo::Context>& context, std::size_t elements)
      : share_(elements / static_cast<std::size_t>(context->size)),
        in_(share_),
        out_(elements),
        opts_(context) {
    // Values depend on the global position, so a block landing in the wrong place is wrong.
    for (std::size_t j = 0; j < share_; ++j) {
      in_[j] = input_value(context->rank, static_cast<std::size_t>(context->rank) * share_ + j);
    }
    opts_.setInput(in_.data(), share_);
    opts_.setOutput(out_.data(), elements);
  }

  void run() override { gloo::allgather(opts_); }
  void prepare_check() override { std::fill(out_.begin(), out_.end(), kPoison); }
  std::uint64_t wrong_elements() const override {
    std::uint64_t wrong = 0;
    for (std::size_t k = 0; k < out_.size(); ++k) {
      if (out_[k] != input_value(static_cast<int>(k / share_), k)) ++wrong;
    }
    return wrong;
  }

 private:
  std::size_t share_;
  std::vector<float> in_;
  std::vector<float> out_;
  gloo::AllgatherOptions opts_;
};

}  // namespace

std::unique_ptr<CollectiveOp> make_allgather_op(const std::shared_ptr<gloo::Context>& context,
                                                std::size_t elements) {
  return std::make_unique<AllgatherOp>(context, elements);
}

}  // namespace chaosbench::bench
