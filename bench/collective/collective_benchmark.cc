#include "bench/collective/collective_benchmark.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "bench/collective/collective_kind.h"
#include "bench/collective/collective_op.h"
#include "bench/collective/collective_report.h"
#include "bench/collective/collective_sizes.h"
#include "bench/rendezvous/rendezvous.h"
#include "bench/common/scoped_signal.h"

namespace chaosbench::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The old-API algorithms hold byte counts in an int.
constexpr std::uint64_t kMaxBytes = INT_MAX;
// Tag of the bookkeeping allreduce, apart from the benchmarked ops (tag 0).
constexpr std::uint32_t kSummaryTag = 1;

void barrier(const std::shared_ptr<gloo::Context>& context) {
  gloo::BarrierOptions opts(context);
  gloo::barrier(opts);
}

// Sums `values` over all ranks (outside any timed region): the per-rank mean times and
// wrong counts that rank 0 prints, as nccl-tests averages time over ranks.
template <std::size_t N>
std::array<double, N> allreduce_summary(const std::shared_ptr<gloo::Context>& context,
                                        std::array<double, N> values) {
  std::array<double, N> out{};
  gloo::AllreduceOptions opts(context);
  opts.setTag(kSummaryTag);
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  opts.setInput(values.data(), N);
  opts.setOutput(out.data(), N);
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<double>));
  gloo::allreduce(opts);
  return out;
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// One rank's sweep over every collective, algorithm and size. `where` always names what is
// running, so an exception can say which step failed.
class Sweep {
 public:
  Sweep(const CollectiveConfig& cfg, MetricsClient& metrics, std::string& where)
      : cfg_(cfg), metrics_(metrics), where_(where) {}

  // Returns kCollectiveOk or kCollectiveFailed (wrong results); gloo errors throw.
  int run(RendezvousStore& store) {
    where_ = fmt::format("rendezvous via {} (prefix \"{}\")", store.spec(), cfg_.store_prefix);
    gloo::transport::tcp::attr attr;
    attr.hostname = cfg_.host;
    device_ = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(cfg_.rank, cfg_.world_size);
    context->setTimeout(cfg_.timeout);
    context->connectFullMesh(store.store(), device_);
    context_ = context;

    if (cfg_.rank == 0) print(format_header(cfg_));
    started_ = Clock::now();
    for (passes_ = 1; !stop_; ++passes_) {
      for (const auto& name : cfg_.collectives) {
        const CollectiveInfo& info = *find_collective(name);
        std::vector<std::string_view> algorithms;
        if (info.kind == CollectiveKind::kAllreduce && !cfg_.algorithms.empty()) {
          algorithms.assign(cfg_.algorithms.begin(), cfg_.algorithms.end());
        } else {
          algorithms.push_back(info.algorithms.front());
        }
        for (auto algorithm : algorithms) {
          for (auto bytes : size_sweep(cfg_.min_bytes, cfg_.max_bytes, cfg_.factor)) {
            if (!stop_) run_size(info, algorithm, bytes);
          }
        }
      }
      if (cfg_.duration.count() == 0) break;
    }
    if (cfg_.rank == 0 && cfg_.duration.count() > 0)
      print(fmt::format("# {} passes of the sweep in {:.1f} s", passes_ - 1,
                        std::chrono::duration<double>(Clock::now() - started_).count()));
    // No rank tears down its connections while a peer may still be reading from them.
    where_ = "final barrier";
    barrier(context_);
    if (cfg_.rank == 0) {
      double avg = 0;
      for (double b : busbw_) avg += b;
      if (!busbw_.empty()) avg /= static_cast<double>(busbw_.size());
      print(format_footer(avg, static_cast<int>(busbw_.size())));
    }
    metrics_.flush();
    context_.reset();
    return any_wrong_ ? kCollectiveFailed : kCollectiveOk;
  }

 private:
  void print(const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

  void run_size(const CollectiveInfo& info, std::string_view algorithm, std::uint64_t bytes) {
    const std::size_t elements = element_count(info.kind, bytes, cfg_.world_size);
    const std::uint64_t actual = elements * kElementBytes;
    where_ = fmt::format("{} {} {}", info.name, algorithm, format_bytes(actual));
    if (elements == 0) {
      if (cfg_.rank == 0) {
        print(fmt::format("# {} {}: {} B is less than one float per rank; skipped", info.name,
                          algorithm, bytes));
      }
      return;
    }
    auto op = make_collective_op(info.kind, algorithm, context_, elements);
    for (int i = 0; i < cfg_.warmup_iters; ++i) {
      if (op->in_place()) op->reset_inputs();
      op->run();
    }

    // Everything the timed loop writes is allocated here; records are built after it, so
    // that no rank's bookkeeping delays its peers' next iteration.
    const auto iters = static_cast<std::size_t>(cfg_.iters);
    std::vector<double> micros(iters);
    std::vector<double> mid_times(iters);
    barrier(context_);
    for (std::size_t i = 0; i < iters; ++i) {
      if (op->in_place()) op->reset_inputs();
      const double start_wall = wall_time_now();
      const auto start = Clock::now();
      op->run();
      const auto stop = Clock::now();
      micros[i] = std::chrono::duration<double, std::micro>(stop - start).count();
      // Samples are stamped at the middle of their iteration, so an op that spans a fault
      // window (a frozen peer) is counted in that window's phase.
      mid_times[i] = start_wall + micros[i] * 0.5e-6;
    }

    const Labels labels{{"collective", std::string(info.name)},
                        {"algorithm", std::string(algorithm)},
                        {"bytes", static_cast<std::int64_t>(actual)},
                        {"ranks", static_cast<std::int64_t>(cfg_.world_size)}};
    double total_us = 0;
    for (std::size_t i = 0; i < iters; ++i) {
      total_us += micros[i];
      metrics_.sample("comm/latency", micros[i], "us", labels, mid_times[i]);
      metrics_.event("step", {{"step", ++steps_}}, mid_times[i] + micros[i] * 0.5e-6);
    }

    std::uint64_t wrong = 0;
    if (cfg_.check) {
      op->prepare_check();
      op->run();
      wrong = op->wrong_elements();
      metrics_.sample("comm/wrong_elements", static_cast<double>(wrong), "count", labels);
      if (wrong != 0) {
        std::fputs(
            fmt::format("rank {}: {}: {} wrong elements\n", cfg_.rank, where_, wrong).c_str(),
            stderr);
      }
    }
    metrics_.flush();

    // Rank 0 alone says whether the time is up, so the sum is 0 or 1 on every rank.
    const bool time_up = cfg_.rank == 0 && cfg_.duration.count() > 0 && Clock::now() - started_ >= cfg_.duration;
    const auto totals = allreduce_summary<3>(
        context_, {total_us / static_cast<double>(iters), static_cast<double>(wrong), time_up ? 1.0 : 0.0});
    if (totals[1] > 0) any_wrong_ = true;
    if (totals[2] > 0) stop_ = true;
    if (cfg_.rank == 0 && passes_ == 1) {
      SizeSummary row;
      row.collective = info.name;
      row.algorithm = algorithm;
      row.bytes = actual;
      row.elements = elements;
      row.time_us = totals[0] / cfg_.world_size;
      row.algbw = algorithm_bandwidth(actual, row.time_us);
      row.busbw = row.algbw * bus_bandwidth_factor(info.kind, cfg_.world_size);
      if (cfg_.check) row.wrong = static_cast<std::uint64_t>(totals[1]);
      busbw_.push_back(row.busbw);
      print(format_row(row));
    }
  }

  const CollectiveConfig& cfg_;
  MetricsClient& metrics_;
  std::string& where_;
  // Declared in this order so the context (and its connections) goes before the device.
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::int64_t steps_ = 0;
  Clock::time_point started_{};
  int passes_ = 0;
  bool stop_ = false;
  std::vector<double> busbw_;
  bool any_wrong_ = false;
};

}  // namespace

std::optional<std::string> collective_config_error(const CollectiveConfig& cfg) {
  if (cfg.world_size < 2) {
    return fmt::format("world_size is {}; a collective needs at least 2 ranks", cfg.world_size);
  }
  if (cfg.rank < 0 || cfg.rank >= cfg.world_size) {
    return fmt::format("rank {} is outside 0..{}", cfg.rank, cfg.world_size - 1);
  }
  if (cfg.collectives.empty()) return std::string("no collectives to run");
  for (const auto& name : cfg.collectives) {
    if (find_collective(name) == nullptr) {
      std::string known;
      for (const auto& c : collective_table()) {
        known += fmt::format("{}\"{}\"", known.empty() ? "" : ", ", c.name);
      }
      return fmt::format("unknown collective \"{}\" (known: {})", name, known);
    }
  }
  const auto* allreduce = find_collective("allreduce");
  for (const auto& algorithm : cfg.algorithms) {
    const auto& known = allreduce->algorithms;
    if (std::find(known.begin(), known.end(), algorithm) == known.end()) {
      return fmt::format("unknown allreduce algorithm \"{}\" (known: \"{}\")", algorithm,
                         fmt::join(known, "\", \""));
    }
  }
  if (cfg.min_bytes == 0) return std::string("min_bytes must be at least 1");
  if (cfg.min_bytes > cfg.max_bytes) {
    return fmt::format("min_bytes {} is above max_bytes {}", cfg.min_bytes, cfg.max_bytes);
  }
  if (cfg.max_bytes > kMaxBytes) {
    return fmt::format("max_bytes {} is above {} (gloo counts bytes in an int)", cfg.max_bytes,
                       kMaxBytes);
  }
  if (cfg.factor < 2) return fmt::format("factor is {}; it must be at least 2", cfg.factor);
  if (cfg.warmup_iters < 0) return fmt::format("warmup_iters is {}", cfg.warmup_iters);
  if (cfg.iters < 1) return fmt::format("iters is {}; it must be at least 1", cfg.iters);
  if (cfg.timeout.count() <= 0) return std::string("timeout must be positive");
  if (cfg.host.empty()) return std::string("host is empty");
  return std::nullopt;
}

int run_collective_benchmark(const CollectiveConfig& cfg, MetricsClient& metrics) {
  if (auto error = collective_config_error(cfg)) {
    std::fputs(fmt::format("rank {}: bad config: {}\n", cfg.rank, *error).c_str(), stderr);
    return kCollectiveBadConfig;
  }
  std::unique_ptr<RendezvousStore> store;
  try {
    store = make_store(cfg.store, cfg.store_prefix);
  } catch (const std::invalid_argument& e) {
    std::fputs(fmt::format("rank {}: bad config: {}\n", cfg.rank, e.what()).c_str(), stderr);
    return kCollectiveBadConfig;
  } catch (const std::exception& e) {
    std::fputs(fmt::format("rank {}: store: {}\n", cfg.rank, one_line(e.what())).c_str(),
               stderr);
    return kCollectiveFailed;
  }

  const ScopedSignal ignore_sigpipe(SIGPIPE, SIG_IGN);  // a dead peer is an error, not a killed rank
  std::string where = "start";
  try {
    Sweep sweep(cfg, metrics, where);
    return sweep.run(*store);
  } catch (const std::exception& e) {
    // gloo::IoException (a peer closed or reset its connection, or a timeout),
    // gloo::Exception and gloo::EnforceNotMet all land here: a failed run, not a crash.
    metrics.flush();
    std::fputs(fmt::format("rank {}: {}: {}\n", cfg.rank, where, one_line(e.what())).c_str(),
               stderr);
    return kCollectiveFailed;
  }
}

}  // namespace chaosbench::bench
