// The KServe v2 endpoints of one model, independent of the transport: a request in, a
// response out (at once, or from the batching thread for infer). http_server.h carries
// these over HTTP/1.1; tests may call handle() directly.
//   GET  /v2/health/live, /v2/health/ready, /v2, /v2/models/{name}, /v2/models/{name}/ready
//   POST /v2/models/{name}/infer
//   GET  /metrics (Prometheus text)
// Threads: handle() from any thread; `reply` runs exactly once, on the caller's thread or
// on the batching thread, and must not block.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "bench/serve/dynamic_batcher.h"
#include "bench/serve/inference_model.h"
#include "bench/serve/serve_metrics.h"

namespace chaosbench::bench::serve {

struct HttpRequest {
  std::string method;  // "GET", "POST"
  std::string target;  // "/v2/models/mlp/infer?x=1"
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class InferenceService {
 public:
  using Reply = std::function<void(HttpResponse)>;

  // Starts the batcher on `model`, which must outlive the service.
  InferenceService(std::string model_name, InferenceModel& model, BatcherConfig batching);
  ~InferenceService();

  void handle(HttpRequest request, Reply reply);
  // A response the transport itself decides (413 body too large, 400 unparsable HTTP),
  // counted like the others.
  HttpResponse transport_error(int status, const std::string& message);

  // Answers what is queued, then refuses new infer calls with 503. Idempotent.
  void stop();

  ServeMetrics& metrics() { return metrics_; }
  const std::string& model_name() const { return name_; }
  int queue_depth() const { return batcher_.queue_depth(); }

 private:
  void infer(HttpRequest& request, Reply& reply, std::chrono::steady_clock::time_point start);
  std::string model_metadata() const;
  HttpResponse readiness() const;

  std::string name_;
  InferenceModel& model_;
  ServeMetrics metrics_;
  DynamicBatcher batcher_;
};

}  // namespace chaosbench::bench::serve
