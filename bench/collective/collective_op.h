// One collective at one message size, ready to run: buffers allocated and gloo options
// or algorithm objects built up front, so that run() is exactly the gloo call the
// benchmark times. One small implementation file per collective; the driver sees only this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "bench/collective/collective_kind.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace chaosbench::bench {

class CollectiveOp {
 public:
  virtual ~CollectiveOp() = default;

  // True when the gloo call overwrites its own input (old-API algorithms), so inputs must
  // be restored with reset_inputs() before every iteration or sums would grow each time.
  virtual bool in_place() const { return false; }
  // Restores pristine inputs; never timed. A no-op for out-of-place ops.
  virtual void reset_inputs() {}

  // Exactly the gloo call. Blocks until this rank's part is done; throws gloo::IoException
  // when a peer goes away and gloo::Exception (or gloo::EnforceNotMet) on other errors.
  virtual void run() = 0;

  // Fresh inputs and an output poisoned with a value no correct result has, so that a
  // check iteration cannot pass on what an earlier iteration left behind.
  virtual void prepare_check() = 0;
  // After prepare_check() and run(): elements that differ from the exactly known result.
  virtual std::uint64_t wrong_elements() const = 0;
};

// Inputs are small integers, so every partial float sum of up to ~1,600 ranks is exact and
// results compare with ==. Element i of rank r is (r+1)*(1+i%13); the 13 makes a misplaced
// block visible.
inline float input_value(int rank, std::size_t i) {
  return static_cast<float>((rank + 1) * static_cast<int>(1 + i % 13));
}
// Sum of input_value over all ranks at position i.
inline float sum_over_ranks(int ranks, std::size_t i) {
  return static_cast<float>(ranks * (ranks + 1) / 2 * static_cast<int>(1 + i % 13));
}
// Written into outputs before a check; every expected value is positive.
inline constexpr float kPoison = -1.0f;

// `elements` is the whole buffer in floats (see collective_sizes.h); for allgather and
// reduce_scatter a multiple of the context size. `algorithm` is a name from
// collective_table(). Throws std::invalid_argument for an algorithm it does not know.
std::unique_ptr<CollectiveOp> make_collective_op(CollectiveKind kind, std::string_view algorithm,
                                                 const std::shared_ptr<gloo::Context>& context,
                                                 std::size_t elements);

// One factory per collective, each in its own file.
std::unique_ptr<CollectiveOp> make_allreduce_op(std::string_view algorithm,
                                                const std::shared_ptr<gloo::Context>& context,
                                                std::size_t elements);
std::unique_ptr<CollectiveOp> make_allgather_op(const std::shared_ptr<gloo::Context>& context,
                                                std::size_t elements);
std::unique_ptr<CollectiveOp> make_broadcast_op(const std::shared_ptr<gloo::Context>& context,
                                                std::size_t elements);
std::unique_ptr<CollectiveOp> make_reduce_scatter_op(
    const std::shared_ptr<gloo::Context>& context, std::size_t elements);

}  // namespace chaosbench::bench
