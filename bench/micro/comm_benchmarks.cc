#include "bench/micro/comm_benchmarks.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "bench/rendezvous/rendezvous.h"
#include "bench/micro/scratch_dir.h"

namespace chaosbench::bench::micro {
namespace {

constexpr std::chrono::milliseconds kTimeout{5000};  // a lost message fails the row, never hangs it
constexpr std::uint64_t kSlot = 0x6d6963726f;        // "micro"

// Two connected gloo contexts, made once on first use. Rank 0 is driven by the benchmark
// thread, rank 1 by one echo thread per benchmark call; never both at once for one rank.
class LoopbackPair {
 public:
  void ensure() {
    std::call_once(once_, [this] { connect(); });
    if (!ranks_[0] || !ranks_[1]) throw std::runtime_error("gloo loopback pair: " + error_);
  }
  gloo::Context& rank(int r) { return *ranks_[r]; }

 private:
  void connect() {
    try {
      dir_ = std::make_unique<ScratchDir>("/tmp", "chaosbench-micro-");
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      device_ = gloo::transport::tcp::CreateDevice(attr);
      std::shared_ptr<gloo::rendezvous::Context> contexts[2];
      std::exception_ptr peer_error;
      const auto join = [&](int r) {
        auto store = make_store("file:" + dir_->path(), "pingpong");
        auto context = std::make_shared<gloo::rendezvous::Context>(r, 2);
        context->setTimeout(kTimeout);
        context->connectFullMesh(store->store(), device_);
        contexts[r] = std::move(context);
      };
      std::thread peer([&] {
        try {
          join(1);
        } catch (...) {
          peer_error = std::current_exception();
        }
      });
      try {
        join(0);
      } catch (...) {
        peer.join();
        throw;
      }
      peer.join();
      if (peer_error) std::rethrow_exception(peer_error);
      ranks_[0] = contexts[0];
      ranks_[1] = contexts[1];
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }

  // Declaration order matters: the contexts go first, then the device, then the directory.
  std::once_flag once_;
  std::unique_ptr<ScratchDir> dir_;  // the FileStore's directory
  std::string error_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> ranks_[2];
};

// Rank 1: receive a message, send it back, until a message arrives with `stop` set.
void echo(gloo::Context& context, std::size_t bytes, const std::atomic<bool>& stop, std::exception_ptr& error) {
  try {
    std::vector<char> data(bytes);
    auto buffer = context.createUnboundBuffer(data.data(), bytes);
    for (;;) {
      buffer->recv(0, kSlot);
      buffer->waitRecv(kTimeout);
      if (stop.load()) return;
      buffer->send(0, kSlot);
      buffer->waitSend(kTimeout);
    }
  } catch (...) {
    error = std::current_exception();
  }
}

void pingpong_body(benchmark::State& state, LoopbackPair& pair, std::size_t bytes) {
  pair.ensure();
  std::atomic<bool> stop{false};
  std::exception_ptr peer_error;
  std::thread peer([&] { echo(pair.rank(1), bytes, stop, peer_error); });
  std::vector<char> data(bytes, 'x');
  auto buffer = pair.rank(0).createUnboundBuffer(data.data(), bytes);
  std::exception_ptr error;
  try {
    for (auto _ : state) {
      buffer->send(1, kSlot);
      buffer->waitSend(kTimeout);
      buffer->recv(1, kSlot);
      buffer->waitRecv(kTimeout);
    }
    stop.store(true);  // before the last send: the echo thread reads it after receiving
    buffer->send(1, kSlot);
    buffer->waitSend(kTimeout);
  } catch (...) {
    error = std::current_exception();
  }
  peer.join();  // returns within kTimeout: the echo thread's waits time out too
  if (error) std::rethrow_exception(error);
  if (peer_error) std::rethrow_exception(peer_error);
}

}  // namespace

std::vector<MicroBenchmark> comm_benchmarks() {
  std::vector<MicroBenchmark> rows;
  auto pair = std::make_shared<LoopbackPair>();
  for (std::size_t bytes : {std::size_t{4}, std::size_t{64} << 10}) {
    MicroBenchmark row;
    row.name = fmt::format("comm/latency/pingpong/bytes:{}", bytes);
    row.metric = "comm/latency";
    row.labels = {{"collective", "pingpong"}, {"bytes", static_cast<std::int64_t>(bytes)}, {"ranks", std::int64_t{2}},
                  {"transport", "gloo/tcp loopback"}};
    row.measure = {"", 0.5};  // one iteration is a round trip; one-way = RTT / 2
    row.time_unit = benchmark::kMicrosecond;
    row.body = guarded([pair, bytes](benchmark::State& state) { pingpong_body(state, *pair, bytes); });
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace chaosbench::bench::micro
