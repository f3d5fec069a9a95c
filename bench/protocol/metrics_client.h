// A workload's side of the metrics wire protocol, for the built-in C++ workloads.
// Connects to the address in CHAOSBENCH_METRICS ("unix:/path/to/socket"), buffers records
// and writes whole lines. Not thread-safe: one client per thread. When the harness is not
// there (variable unset or connect fails) every call is a cheap no-op, so a workload also
// runs stand-alone.
#pragma once

#include <string>
#include <string_view>

#include "bench/protocol/record.h"

namespace chaosbench::bench {

class MetricsClient {
 public:
  // Reads CHAOSBENCH_METRICS and CHAOSBENCH_RANK from the environment.
  static MetricsClient from_environment();

  MetricsClient() = default;
  MetricsClient(std::string_view address, int rank);
  MetricsClient(MetricsClient&& other) noexcept;
  MetricsClient& operator=(MetricsClient&& other) noexcept;
  MetricsClient(const MetricsClient&) = delete;
  MetricsClient& operator=(const MetricsClient&) = delete;
  ~MetricsClient();  // flushes

  bool connected() const { return fd_ >= 0; }
  int rank() const { return rank_; }

  // Buffers a record; time defaults to now. Buffers are written when they pass 64 KiB,
  // on flush() and on destruction, so a timed loop can record without a system call.
  void sample(std::string_view name, double value, std::string_view unit, Labels labels = {},
              double time = 0);
  void event(std::string_view name, Labels fields = {}, double time = 0);

  // Writes everything buffered (blocking). Call before a phase ends or the process exits.
  void flush();

 private:
  void append(const Record& record);
  int fd_ = -1;
  int rank_ = 0;
  std::string buffer_;
};

}  // namespace chaosbench::bench
