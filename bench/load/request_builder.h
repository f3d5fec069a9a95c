// The bytes a load run sends, built once before it starts and reused for every request:
// KServe v2 infer requests with random FP32 rows, or one fixed method/path/body.
#pragma once

#include <string>
#include <vector>

#include "bench/load/load_config.h"

namespace chaosbench::bench::load {

// {"inputs":[{"name":NAME,"shape":[rows,dim],"datatype":"FP32","data":[...]}]} with values
// drawn uniformly from [-1, 1) by a generator seeded with `seed`.
std::string kserve_infer_body(const std::string& input_name, int rows, int dim, std::uint64_t seed);

// One complete HTTP/1.1 keep-alive request: request line, Host, Content-Type and
// Content-Length headers when there is a body, the body.
std::string http_request(const std::string& method, const std::string& path, const http::HttpClientEndpoint& endpoint,
                         const std::string& body);

// The requests for each endpoint of `config`: result[e] holds the variants for endpoint e
// (config.body_variants infer bodies, or the single fixed request).
std::vector<std::vector<std::string>> build_requests(const LoadConfig& config);

}  // namespace chaosbench::bench::load
