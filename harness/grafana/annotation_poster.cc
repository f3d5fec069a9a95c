// The annotation poster's thread and queue (annotation_poster.h).
#include "harness/grafana/annotation_poster.h"

#include <algorithm>
#include <utility>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/http/http_client.h"

namespace chaosbench::harness::grafana {

AnnotationPoster::AnnotationPoster(GrafanaSettings settings, Warn warn)
    : settings_(std::move(settings)), warn_(std::move(warn)), thread_([this] { loop(); }) {}

AnnotationPoster::~AnnotationPoster() { finish(std::chrono::milliseconds(0)); }

void AnnotationPoster::started(std::size_t occurrence, FaultAnnotation a) {
  a.end_ms = a.start_ms;
  enqueue({occurrence, false, std::move(a), 0});
}

void AnnotationPoster::ended(std::size_t occurrence, std::int64_t end_ms) { enqueue({occurrence, true, {}, end_ms}); }

// A dead Grafana takes each request's whole timeout while a fault that repeats quickly
// keeps queueing: past kMaxQueued the job is dropped (counted) rather than held.
void AnnotationPoster::enqueue(Job job) {
  {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    if (queue_.size() >= kMaxQueued) {
      ++dropped_;
      ++failures_;
      return;
    }
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void AnnotationPoster::finish(std::chrono::milliseconds within) {
  if (finished_) return;
  finished_ = true;
  {
    std::lock_guard lock(mutex_);
    finishing_ = true;
    deadline_ = std::chrono::steady_clock::now() + within;
  }
  wake_.notify_one();
  thread_.join();
}

// Takes jobs in order; once finishing, works until the queue is empty or the deadline
// passes, and cuts each request to the time left.
void AnnotationPoster::loop() {
  for (;;) {
    Job job;
    std::chrono::milliseconds timeout = settings_.request_timeout;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return finishing_ || !queue_.empty(); });
      if (dropped_ > 0) {
        const std::size_t dropped = std::exchange(dropped_, 0);
        lock.unlock();
        fail(fmt::format("{} Grafana annotation request(s) dropped: more than {} were waiting", dropped, kMaxQueued));
        continue;
      }
      if (queue_.empty()) return;
      if (finishing_) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
          const std::size_t dropped = queue_.size();
          queue_.clear();
          lock.unlock();
          failures_ += dropped;
          fail(fmt::format("{} Grafana annotation request(s) left unsent when the run ended", dropped));
          return;
        }
        timeout = std::min(timeout, left);
      }
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    run_job(job, timeout);
  }
}

void AnnotationPoster::run_job(const Job& job, std::chrono::milliseconds timeout) {
  if (!job.end) {
    const FaultAnnotation& a = annotations_[job.occurrence] = job.annotation;
    std::string answer;
    if (!request("POST", annotations_url(settings_.url), create_body(a, settings_.dashboard_uid), timeout,
                 fmt::format("creating the annotation of fault {}", a.fault), &answer))
      return;
    if (auto id = created_id(answer)) ids_[job.occurrence] = *id;
    else fail(fmt::format("Grafana's answer to the annotation of fault {} has no id: its end cannot be set", a.fault));
    return;
  }
  auto it = annotations_.find(job.occurrence);
  if (it == annotations_.end()) return;
  FaultAnnotation& a = it->second;
  a.end_ms = std::max(job.end_ms, a.start_ms);
  const std::string what = fmt::format("ending the annotation of fault {}", a.fault);
  if (auto id = ids_.find(job.occurrence); id != ids_.end())
    request("PATCH", annotation_url(settings_.url, id->second), end_body(a), timeout, what, nullptr);
  else  // the create failed (or had no id): the whole region at once
    request("POST", annotations_url(settings_.url), create_body(a, settings_.dashboard_uid), timeout, what, nullptr);
}

bool AnnotationPoster::request(const std::string& method, const std::string& url, const std::string& body,
                               std::chrono::milliseconds timeout, const std::string& what, std::string* answer) {
  http::Request req;
  req.method = method;
  req.url = url;
  req.body = body;
  req.timeout = timeout;
  req.max_body = 1u << 20;
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  if (!settings_.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + settings_.token);
  http::Response resp;
  try {
    resp = http::fetch(req);
  } catch (const std::exception& e) {
    resp.error = e.what();
  }
  if (resp.answered() && resp.status >= 200 && resp.status < 300) {
    ++sent_;
    if (answer) *answer = std::move(resp.body);
    return true;
  }
  ++failures_;
  // The error may quote the URL too (an invalid one): only the redacted form is shown.
  const std::string shown = url_for_messages(url);
  std::string error = resp.error;
  for (auto at = error.find(url); !url.empty() && at != std::string::npos; at = error.find(url, at + shown.size()))
    error.replace(at, url.size(), shown);
  fail(resp.answered() ? fmt::format("{}: {} {} answered HTTP {}", what, method, shown, resp.status)
                       : fmt::format("{}: {} {} failed: {}", what, method, shown, error));
  return false;
}

void AnnotationPoster::fail(const std::string& what) {
  spdlog::warn("--grafana: {}", what);
  if (!warn_) return;
  try {
    warn_(what);
  } catch (const std::exception& e) {
    spdlog::warn("--grafana: reporting a failed annotation: {}", e.what());
  }
}

}  // namespace chaosbench::harness::grafana
