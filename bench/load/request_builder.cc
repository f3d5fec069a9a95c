#include "bench/load/request_builder.h"

#include <fmt/format.h>

#include <random>

namespace chaosbench::bench::load {

std::string kserve_infer_body(const std::string& input_name, int rows, int dim, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::string body = fmt::format(R"({{"inputs":[{{"name":"{}","shape":[{},{}],"datatype":"FP32","data":[)",
                                 input_name, rows, dim);
  body.reserve(body.size() + static_cast<std::size_t>(rows) * dim * 11 + 8);
  const long count = static_cast<long>(rows) * dim;
  for (long i = 0; i < count; ++i) {
    if (i) body += ',';
    fmt::format_to(std::back_inserter(body), "{:.6g}", value(rng));
  }
  body += "]}]}";
  return body;
}

std::string http_request(const std::string& method, const std::string& path, const http::HttpClientEndpoint& endpoint,
                         const std::string& body) {
  std::string request = fmt::format("{} {} HTTP/1.1\r\nHost: {}\r\n", method, path, endpoint.text());
  if (!body.empty() || method == "POST" || method == "PUT")
    request += fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n", body.size());
  request += "\r\n";
  request += body;
  return request;
}

std::vector<std::vector<std::string>> build_requests(const LoadConfig& config) {
  std::vector<std::string> bodies;
  if (config.path.empty()) {
    for (int v = 0; v < config.body_variants; ++v)
      bodies.push_back(kserve_infer_body(config.input_name, config.rows, config.dim, config.seed + v));
  } else {
    bodies.push_back(config.body);
  }
  const std::string method = config.path.empty() ? "POST" : config.method;
  const std::string path = config.path.empty() ? "/v2/models/" + config.model + "/infer" : config.path;
  std::vector<std::vector<std::string>> out;
  for (const auto& endpoint : config.endpoints) {
    auto& variants = out.emplace_back();
    for (const auto& body : bodies) variants.push_back(http_request(method, path, endpoint, body));
  }
  return out;
}

}  // namespace chaosbench::bench::load
