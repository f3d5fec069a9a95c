// The run's Prometheus scrapes: one thread per target that, from start() to stop(),
// fetches the target's URL every `every` (from a node's network namespace when the
// target names a node), parses the exposition and hands the converted samples
// (scrape_converter.h) to a callback, beside two of its own per scrape:
//   scrape/up{instance}        1 when the target answered with a valid exposition, else 0;
//   scrape/duration{instance}  how long the request took (s).
// A failed scrape is never fatal: it is counted, and the state hook hears of each change
// between up and down (not of every failure). Until a target first answers it is
// "pending": failures then (a replica still starting) are counted but neither reported
// as down nor sampled as up = 0.
// Threads: start()/stop() from one thread (the run's); the hooks are called from the
// targets' threads, concurrently, so they must be thread-safe. stop() blocks until every
// thread ended: at most one request's timeout.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/protocol/record.h"
#include "harness/scenario/scrape_spec.h"

namespace chaosbench::harness::prometheus {

// A scrape as the run resolved it: placeholders expanded, the namespace to fetch from.
struct ScrapeTarget {
  ScrapeSpec spec;
  std::string url;       // spec.url with {node.N.addr} expanded
  int netns_fd = -1;     // the namespace to connect from; -1: this process's own
  std::string instance;  // the `instance` label: the URL's host:port
};

struct ScrapeHooks {
  std::function<void(const bench::Sample&)> sample;
  // A target went up (answered after being down or pending) or down (failed after being
  // up); `why` is the failure, `failures` the count so far.
  std::function<void(const ScrapeTarget&, bool up, const std::string& why, std::uint64_t failures)> state;
};

struct ScrapeStats {
  std::string url;
  std::uint64_t scrapes = 0;   // attempts
  std::uint64_t failures = 0;  // attempts without a valid exposition, once it first answered
  std::uint64_t pending_failures = 0;  // the same before it first answered (still starting)
  std::uint64_t dropped_series = 0;
  bool ever_up = false;
  std::string last_error;
};

// "127.0.0.1:9100" from "http://127.0.0.1:9100/metrics" (the default port when none is
// written: 80 or 443).
std::string instance_of(const std::string& url);

class Scraper {
 public:
  Scraper(std::vector<ScrapeTarget> targets, ScrapeHooks hooks);
  ~Scraper();  // stop()
  Scraper(const Scraper&) = delete;
  Scraper& operator=(const Scraper&) = delete;

  void start();
  // Idempotent. Ends every thread; a request in flight finishes first (its timeout).
  void stop();
  // Each target's counts; call after stop() for the final ones.
  std::vector<ScrapeStats> stats() const;

 private:
  struct Worker;
  void run(Worker& w);
  void scrape_once(Worker& w);

  ScrapeHooks hooks_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // under mutex_
};

}  // namespace chaosbench::harness::prometheus
