// A rank that does nothing but report: COUNT samples (comm/latency, with labels as the
// collective workload writes them) through the metrics client as fast as it can, then
// exits, printing its own send rate. The load of perf/harness/agents.sh's records part: how many
// records per second reach the controller, directly or through agents.
//   record_flood COUNT
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench/protocol/metrics_client.h"

int main(int argc, char** argv) {
  const long count = argc > 1 ? std::atol(argv[1]) : 100000;
  auto client = chaosbench::bench::MetricsClient::from_environment();
  if (!client.connected()) {
    std::fprintf(stderr, "record_flood: no CHAOSBENCH_METRICS to write to\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i)
    client.sample("comm/latency", 80.0 + static_cast<double>(i % 97), "us",
                  {{"collective", std::string("allreduce")}, {"bytes", std::int64_t{1024} << (i % 8)}});
  client.flush();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("record_flood: %ld records in %.3f s (%.0f records/s)\n", count, s, static_cast<double>(count) / s);
  return 0;
}
