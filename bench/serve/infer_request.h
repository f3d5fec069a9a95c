// The KServe v2 / Open Inference Protocol JSON of one infer call, parsed and written
// without the transport, so the parser can be fuzzed directly. One FP32 input tensor of
// shape [n, input_dim], data flat or nested one level per dimension; one FP32 output.
// Pure functions: thread-safe, never throw on bad input (errors are values).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::bench::serve {

struct InferRequest {
  int rows = 0;
  std::vector<float> data;  // rows x input_dim, row-major
  std::string id;           // the request's "id", echoed in the response when given
};

struct ParsedInfer {
  bool ok = false;
  InferRequest request;
  std::string error;  // for a 400 when !ok: "inputs[0].shape: expected [n, 256], got [2, 3]"
};

// body: {"id"?, "inputs":[{"name","shape":[n,input_dim],"datatype":"FP32","data":[...]}]}.
// Rejects n < 1, n > max_rows, non-numbers, values outside float range and data deeper
// than the shape.
ParsedInfer parse_infer_request(std::string_view body, int input_dim, int max_rows);

// {"model_name","id"?,"outputs":[{"name":"output","shape":[rows,output_dim],"datatype":"FP32","data":[...]}]}
std::string infer_response_json(std::string_view model_name, std::string_view id, const float* y, int rows,
                                int output_dim);

// {"error":"message"} with the message escaped.
std::string error_json(std::string_view message);

}  // namespace chaosbench::bench::serve
