// `run --grafana URL`: one Grafana region annotation per fault occurrence, posted from a
// thread of its own so a slow or dead Grafana never delays a fault. At apply it creates
// the annotation (time = timeEnd = apply); at revert it sets timeEnd (PATCH), or, when
// the create had failed, creates the whole region then. A failed request is a warning
// (the `warn` callback, spdlog), never the run's failure. Requests: annotation_request.h.
// The token (CHAOSBENCH_GRAFANA_TOKEN) goes only into the Authorization header: no log
// line, warning or timeline event carries it.
// Threads: started(), ended() and finish() from one owner thread; they only queue, except
// finish(), which waits up to its deadline. `warn` runs on the poster's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "harness/grafana/annotation_request.h"

namespace chaosbench::harness::grafana {

inline constexpr const char* kTokenEnv = "CHAOSBENCH_GRAFANA_TOKEN";

struct GrafanaSettings {
  std::string url;            // Grafana's root, http(s)://host:port[/sub-path]
  std::string token;          // sent as "Authorization: Bearer TOKEN"; "" sends none
  std::string dashboard_uid;  // "" : organisation annotations, found by their tags
  std::chrono::milliseconds request_timeout{2000};  // each request, connect to answer
};

class AnnotationPoster {
 public:
  using Warn = std::function<void(const std::string& what)>;

  AnnotationPoster(GrafanaSettings settings, Warn warn);
  ~AnnotationPoster();  // finish(0): what is still queued is dropped
  AnnotationPoster(const AnnotationPoster&) = delete;
  AnnotationPoster& operator=(const AnnotationPoster&) = delete;

  // Occurrence `occurrence` took effect at a.start_ms (a.end_ms is set to it).
  void started(std::size_t occurrence, FaultAnnotation a);
  // It ended at `end_ms`. An occurrence never started is ignored.
  void ended(std::size_t occurrence, std::int64_t end_ms);
  // Sends what is queued for at most `within` (each request cut to the time left), drops
  // the rest (counted, one warning) and joins the thread. Idempotent.
  void finish(std::chrono::milliseconds within);

  std::uint64_t sent() const { return sent_.load(); }          // requests Grafana accepted
  std::uint64_t failures() const { return failures_.load(); }  // failed or dropped

 private:
  struct Job {
    std::size_t occurrence = 0;
    bool end = false;
    FaultAnnotation annotation;  // for a start
    std::int64_t end_ms = 0;     // for an end
  };
  void enqueue(Job job);
  void loop();
  void run_job(const Job& job, std::chrono::milliseconds timeout);
  bool request(const std::string& method, const std::string& url, const std::string& body,
               std::chrono::milliseconds timeout, const std::string& what, std::string* answer);
  void fail(const std::string& what);

  GrafanaSettings settings_;
  Warn warn_;
  std::mutex mutex_;
  std::condition_variable wake_;
  static constexpr std::size_t kMaxQueued = 4096;
  std::deque<Job> queue_;                                  // under mutex_, at most kMaxQueued
  std::size_t dropped_ = 0;                                // under mutex_: not yet warned of
  bool finishing_ = false;                                 // under mutex_
  std::chrono::steady_clock::time_point deadline_{};       // under mutex_, once finishing_
  bool finished_ = false;                                  // owner thread only
  // The poster thread's own: each started occurrence and its annotation id, once created.
  std::map<std::size_t, FaultAnnotation> annotations_;
  std::map<std::size_t, std::int64_t> ids_;
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> failures_{0};
  std::thread thread_;
};

}  // namespace chaosbench::harness::grafana
