// Broadcast from root 0 with gloo's new-API gloo::broadcast (a binomial tree). The root
// sends from a separate input buffer, so no iteration changes what is sent.
#include <algorithm>
#include <vector>

#include <gloo/broadcast.h>

#include "bench/collective/collective_op.h"

namespace chaosbench::bench {
namespace {

constexpr int kRoot = 0;

class BroadcastOp final : public CollectiveOp {
 public:
  BroadcastOp(const std::shared_ptr<gloo::Context>& context, std::size_t elements)
      : out_(elements), opts_(context) {
    opts_.setRoot(kRoot);
    if (context->rank == kRoot) {
      in_.resize(elements);
      for (std::size_t i = 0; i < elements; ++i) in_[i] = input_value(kRoot, i);
      opts_.setInput(in_.data(), elements);
    }
    opts_.setOutput(out_.data(), elements);
  }

  void run() override { gloo::broadcast(opts_); }
  void prepare_check() override { std::fill(out_.begin(), out_.end(), kPoison); }
  std::uint64_t wrong_elements() const override {
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < out_.size(); ++i) {
      if (out_[i] != input_value(kRoot, i)) ++wrong;
    }
    return wrong;
  }

 private:
  std::vector<float> in_;  // root only
  std::vector<float> out_;
  gloo::BroadcastOptions opts_;
};

}  // namespace

std::unique_ptr<CollectiveOp> make_broadcast_op(const std::shared_ptr<gloo::Context>& context,
                                                std::size_t elements) {
  return std::make_unique<BroadcastOp>(context, elements);
}

}  // namespace chaosbench::bench
