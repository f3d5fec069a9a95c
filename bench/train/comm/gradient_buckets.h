// The buckets every gradient reducer cuts the flat gradient buffer into (the gloo and TCP
// ring reducers, grad_allreducer.h and tcp_ring_reducer.h, and the NCCL one,
// cuda/nccl_allreducer.h): whole layers, last layer first, as PyTorch DDP does. Plain
// functions on values, free of gloo and CUDA, so that the CUDA layer's own shared module
// (libchaosbench_cuda_workers.so) compiles them in without the rest of the trainer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/compute/mlp_model.h"

namespace chaosbench::bench::train {

struct Bucket {
  int first_layer = 0;  // lowest layer index in it
  int last_layer = 0;   // highest; backward reaches it first
  std::size_t offset = 0;
  std::size_t count = 0;
};

// Buckets of whole layers from the last layer down, each closed at >= bucket_bytes.
std::vector<Bucket> make_buckets(const std::vector<LayerSpan>& spans, std::uint64_t bucket_bytes);

// How many buckets are complete once backward has finished `layer` (-1: every one), the
// first `from` being complete already: backward goes from the last layer down, so a
// bucket is complete when its lowest layer is.
std::size_t buckets_complete(const std::vector<Bucket>& buckets, std::size_t from, int layer);

// The extras of a step: right after bucket 0 in the gradient buffer when its `tail` has
// room for them (bucket 0 holds the last layer, so it ends where the gradients end), else
// after bucket 0's copy in `staged`, which is then sized for both.
float* place_extras(float* grads, const Bucket& first, std::size_t extras, std::size_t tail,
                    std::vector<float>& staged);

}  // namespace chaosbench::bench::train
