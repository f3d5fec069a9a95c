// InferenceService: routing, the infer path (parse, admission, batch, respond) and the
// request counters.
#include "bench/serve/inference_service.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "bench/serve/infer_request.h"

namespace chaosbench::bench::serve {
namespace {

using Clock = std::chrono::steady_clock;

HttpResponse json_response(int status, std::string body) { return HttpResponse{status, "application/json", std::move(body)}; }

// "/v2/models/mlp/infer?x" -> {"v2", "models", "mlp", "infer"}
std::vector<std::string> path_parts(const std::string& target) {
  std::vector<std::string> parts;
  const auto path = target.substr(0, target.find('?'));
  std::size_t i = 0;
  while (i < path.size()) {
    const auto j = path.find('/', i);
    const auto end = j == std::string::npos ? path.size() : j;
    if (end > i) parts.push_back(path.substr(i, end - i));
    i = end + 1;
  }
  return parts;
}

}  // namespace

InferenceService::InferenceService(std::string model_name, InferenceModel& model, BatcherConfig batching)
    : name_(std::move(model_name)),
      model_(model),
      batcher_(model, std::move(batching), [this](const BatchDone& b) { metrics_.record_batch(b); }) {}

InferenceService::~InferenceService() { stop(); }

void InferenceService::stop() { batcher_.stop(); }

HttpResponse InferenceService::transport_error(int status, const std::string& message) {
  metrics_.count_request(status, 0);
  return json_response(status, error_json(message));
}

void InferenceService::handle(HttpRequest request, Reply reply) {
  const auto start = Clock::now();
  auto respond = [&](HttpResponse r) {
    metrics_.count_request(r.status, std::chrono::duration<double>(Clock::now() - start).count());
    reply(std::move(r));
  };
  const auto parts = path_parts(request.target);
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if (parts.size() == 1 && parts[0] == "metrics" && get)
    return respond({200, "text/plain; version=0.0.4", metrics_.prometheus_text(batcher_.queue_depth())});
  if (parts.empty() || parts[0] != "v2") return respond(json_response(404, error_json("no such endpoint")));
  if (parts.size() == 1 && get)
    return respond(json_response(200, R"({"name":"chaosbench","version":"1","extensions":[]})"));
  if (parts.size() == 3 && parts[1] == "health" && get) {
    if (parts[2] == "live") return respond(json_response(200, R"({"live":true})"));
    if (parts[2] == "ready") return respond(readiness());
  }
  if (parts.size() >= 3 && parts[1] == "models") {
    if (parts[2] != name_)
      return respond(json_response(404, error_json(fmt::format("unknown model \"{}\" (serving \"{}\")", parts[2], name_))));
    if (parts.size() == 3 && get) return respond(json_response(200, model_metadata()));
    if (parts.size() == 4 && parts[3] == "ready" && get) return respond(readiness());
    if (parts.size() == 4 && parts[3] == "infer" && post) return infer(request, reply, start);
    if (parts.size() == 4 && parts[3] == "infer")
      return respond(json_response(405, error_json("infer takes POST")));
  }
  respond(json_response(404, error_json("no such endpoint")));
}

// 200 while the model can serve; 503 with the reason once its device is lost, so load
// balancers (and the load generator's readiness wait) route around this replica.
HttpResponse InferenceService::readiness() const {
  if (auto why = model_.unhealthy()) {
    nlohmann::json j = {{"ready", false}, {"error", *why}};
    return json_response(503, j.dump());
  }
  return json_response(200, R"({"ready":true})");
}

void InferenceService::infer(HttpRequest& request, Reply& reply, Clock::time_point start) {
  auto finish = [this, start, reply = std::move(reply)](HttpResponse r) {
    metrics_.count_request(r.status, std::chrono::duration<double>(Clock::now() - start).count());
    reply(std::move(r));
  };
  auto parsed = parse_infer_request(request.body, model_.input_dim(), batcher_.config().max_batch_size);
  if (!parsed.ok) return finish(json_response(400, error_json(parsed.error)));
  const int rows = parsed.request.rows;
  // Completions run on the batching thread; `finish` is shared because submit() may
  // refuse, and then the completion (and its copy) is dropped unused.
  auto shared_finish = std::make_shared<decltype(finish)>(std::move(finish));
  const bool queued = batcher_.submit(
      std::move(parsed.request.data), rows,
      [this, shared_finish, rows, id = std::move(parsed.request.id)](std::vector<float> y, const std::string& error) {
        if (!error.empty()) return (*shared_finish)(json_response(500, error_json(error)));
        (*shared_finish)(json_response(200, infer_response_json(name_, id, y.data(), rows, model_.output_dim())));
      });
  if (!queued)
    (*shared_finish)(json_response(503, error_json(fmt::format("queue full ({} requests waiting)",
                                                               batcher_.config().queue_limit))));
}

std::string InferenceService::model_metadata() const {
  auto tensor = [](const char* name, int dim) {
    return nlohmann::json{{"name", name}, {"datatype", "FP32"}, {"shape", {-1, dim}}};
  };
  nlohmann::json j = {{"name", name_},
                      {"versions", {"1"}},
                      {"platform", "chaosbench_mlp"},
                      {"description", model_.describe()},
                      {"max_batch_size", batcher_.config().max_batch_size},
                      {"inputs", {tensor("input", model_.input_dim())}},
                      {"outputs", {tensor("output", model_.output_dim())}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace chaosbench::bench::serve
