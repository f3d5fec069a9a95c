// A bare gloo ring-allreduce loop with no chaosbench code: the yardstick for the
// collective benchmark's overhead. It forks --ranks processes itself (before any gloo
// object exists), each meets the others through a FileStore in a fresh temporary
// directory, binds gloo's TCP transport to 127.0.0.1 and times every iteration of the
// same call the benchmark's "ring" runs: gloo::allreduce, RING, float sum, out of place.
//
//   gloo_bare_allreduce --ranks 4 --bytes 16777216 --warmup 5 --iters 20
//   {"ranks":4,"bytes":16777216,"iters":20,"mean_us":...,"algbw":...,"busbw":...}
//
// GB/s are 10^9 bytes/s; busbw = algbw * 2(n-1)/n (nccl-tests doc/PERFORMANCE.md).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Options {
  int ranks = 4;
  long long bytes = 16777216;
  int warmup = 5;
  int iters = 20;
};

void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--ranks N] [--bytes S] [--warmup W] [--iters K]\n", argv0);
}

// Returns false on a bad command line.
bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h" || i + 1 >= argc) return false;
    char* end = nullptr;
    const long long value = std::strtoll(argv[++i], &end, 10);
    if (end == argv[i] || *end != '\0') return false;
    if (flag == "--ranks") {
      o.ranks = static_cast<int>(value);
    } else if (flag == "--bytes") {
      o.bytes = value;
    } else if (flag == "--warmup") {
      o.warmup = static_cast<int>(value);
    } else if (flag == "--iters") {
      o.iters = static_cast<int>(value);
    } else {
      return false;
    }
  }
  return o.ranks >= 2 && o.ranks <= 1024 && o.bytes >= 4 && o.warmup >= 0 && o.iters >= 1;
}

// One rank; returns its exit code.
int run_rank(const Options& o, int rank, const std::string& store_dir) {
  const std::size_t elements = static_cast<std::size_t>(o.bytes) / sizeof(float);
  std::vector<float> in(elements);
  std::vector<float> out(elements);
  for (std::size_t i = 0; i < elements; ++i) in[i] = static_cast<float>((rank + 1) * (1 + i % 13));

  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(store_dir);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, o.ranks);
  context->connectFullMesh(store, device);

  gloo::AllreduceOptions opts(context);
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  opts.setInput(in.data(), elements);
  opts.setOutput(out.data(), elements);
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));

  for (int i = 0; i < o.warmup; ++i) gloo::allreduce(opts);
  std::vector<double> micros(static_cast<std::size_t>(o.iters));
  gloo::BarrierOptions barrier(context);
  gloo::barrier(barrier);
  for (auto& us : micros) {
    const auto start = std::chrono::steady_clock::now();
    gloo::allreduce(opts);
    const auto stop = std::chrono::steady_clock::now();
    us = std::chrono::duration<double, std::micro>(stop - start).count();
  }
  // Nobody closes its connections while a peer may still be reading.
  gloo::barrier(barrier);

  const float expected = static_cast<float>(o.ranks * (o.ranks + 1) / 2);
  if (elements > 0 && out[0] != expected) {
    std::fprintf(stderr, "rank %d: wrong result %g, expected %g\n", rank, out[0], expected);
    return 1;
  }
  if (rank == 0) {
    double sum = 0;
    for (double us : micros) sum += us;
    const double mean_us = sum / static_cast<double>(micros.size());
    const double actual = static_cast<double>(elements * sizeof(float));
    const double algbw = actual / mean_us / 1e3;  // bytes / (us * 1e-6) / 1e9
    const double busbw = algbw * 2.0 * (o.ranks - 1) / o.ranks;
    std::printf("{\"ranks\":%d,\"bytes\":%lld,\"iters\":%d,\"mean_us\":%.3f,\"algbw\":%.6f,"
                "\"busbw\":%.6f}\n",
                o.ranks, static_cast<long long>(actual), o.iters, mean_us, algbw, busbw);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    usage(argv[0]);
    return 2;
  }
  char dir_template[] = "/tmp/gloo_bare_allreduce.XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string store_dir = dir_template;

  std::vector<pid_t> children;
  int status_code = 0;
  for (int rank = 0; rank < o.ranks; ++rank) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      status_code = 1;
      // The ranks already started would wait for the missing one until gloo's timeout.
      for (pid_t started : children) ::kill(started, SIGKILL);
      break;
    }
    if (pid == 0) {
      // gloo writes with writev(2): without this a dead peer kills the rank by SIGPIPE
      // instead of raising gloo::IoException.
      std::signal(SIGPIPE, SIG_IGN);
      int rc = 1;
      try {
        rc = run_rank(o, rank, store_dir);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
      }
      std::fflush(nullptr);
      ::_exit(rc);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) status_code = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(store_dir, ec);
  return status_code;
}
