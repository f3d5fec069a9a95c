// parse_infer_request: common::parse_json_bounded (nesting bounded before nlohmann/json
// sees the text, no exceptions), then every field checked by hand so each rejection
// names what was wrong. Messages never quote the request: a hostile value could be huge
// or so deep that printing it recurses off the stack.
#include "bench/serve/infer_request.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"

namespace chaosbench::bench::serve {
namespace {

using nlohmann::json;

ParsedInfer failure(std::string message) {
  ParsedInfer p;
  p.error = std::move(message);
  return p;
}

// Appends one number; false with `why` set when it is not a finite FP32 value.
bool append_number(const json& v, std::vector<float>& out, std::string& why) {
  if (!v.is_number()) {
    why = fmt::format("inputs[0].data: expected numbers, got {}", v.type_name());
    return false;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) {
    why = "inputs[0].data: value outside the FP32 range";
    return false;
  }
  out.push_back(static_cast<float>(d));
  return true;
}

// data is flat [n*dim numbers] or nested [n][dim].
bool read_data(const json& data, int rows, int dim, std::vector<float>& out, std::string& why) {
  if (!data.is_array()) {
    why = "inputs[0].data: expected an array";
    return false;
  }
  const auto total = static_cast<std::size_t>(rows) * static_cast<std::size_t>(dim);
  out.reserve(total);
  if (!data.empty() && data.front().is_array()) {
    if (data.size() != static_cast<std::size_t>(rows)) {
      why = fmt::format("inputs[0].data: {} rows, shape says {}", data.size(), rows);
      return false;
    }
    for (const auto& row : data) {
      if (!row.is_array() || row.size() != static_cast<std::size_t>(dim)) {
        why = fmt::format("inputs[0].data: every row must be an array of {} numbers", dim);
        return false;
      }
      for (const auto& v : row)
        if (!append_number(v, out, why)) return false;
    }
    return true;
  }
  if (data.size() != total) {
    why = fmt::format("inputs[0].data: {} values, shape [{}, {}] needs {}", data.size(), rows, dim, total);
    return false;
  }
  for (const auto& v : data)
    if (!append_number(v, out, why)) return false;
  return true;
}

}  // namespace

ParsedInfer parse_infer_request(std::string_view body, int input_dim, int max_rows) {
  std::string why;
  const json doc = common::parse_json_bounded(body, &why);
  if (doc.is_discarded()) return failure("malformed JSON: " + why);
  if (!doc.is_object()) return failure("expected a JSON object");
  ParsedInfer p;
  if (auto id = doc.find("id"); id != doc.end()) {
    if (!id->is_string()) return failure("id: expected a string");
    p.request.id = id->get<std::string>();
  }
  const auto inputs = doc.find("inputs");
  if (inputs == doc.end() || !inputs->is_array()) return failure("inputs: expected an array");
  if (inputs->size() != 1) return failure(fmt::format("inputs: expected exactly 1 tensor, got {}", inputs->size()));
  const json& in = inputs->front();
  if (!in.is_object()) return failure("inputs[0]: expected an object");
  const auto name = in.find("name");
  if (name == in.end() || !name->is_string()) return failure("inputs[0].name: expected a string");
  const auto datatype = in.find("datatype");
  if (datatype == in.end() || !datatype->is_string()) return failure("inputs[0].datatype: expected a string");
  if (datatype->get<std::string>() != "FP32")
    return failure("inputs[0].datatype: expected FP32 (the only type served)");
  const auto shape = in.find("shape");
  const bool shape_ok = shape != in.end() && shape->is_array() && shape->size() == 2 &&
                        (*shape)[0].is_number_integer() && (*shape)[1].is_number_integer();
  if (!shape_ok) return failure(fmt::format("inputs[0].shape: expected an array of 2 integers [n, {}]", input_dim));
  if ((*shape)[1].is_number_unsigned() ? (*shape)[1].get<std::uint64_t>() != static_cast<std::uint64_t>(input_dim)
                                       : (*shape)[1].get<std::int64_t>() != input_dim)
    return failure(fmt::format("inputs[0].shape: expected [n, {}]: the model takes {} values a row", input_dim, input_dim));
  if ((*shape)[0].is_number_unsigned() && (*shape)[0].get<std::uint64_t>() > static_cast<std::uint64_t>(max_rows))
    return failure(fmt::format("inputs[0].shape: n exceeds max_batch_size {}", max_rows));
  const auto rows = (*shape)[0].get<std::int64_t>();
  if (rows < 1) return failure(fmt::format("inputs[0].shape: n must be at least 1, got {}", rows));
  if (rows > max_rows) return failure(fmt::format("inputs[0].shape: n = {} exceeds max_batch_size {}", rows, max_rows));
  const auto data = in.find("data");
  if (data == in.end()) return failure("inputs[0].data: missing");
  p.request.rows = static_cast<int>(rows);
  if (!read_data(*data, p.request.rows, input_dim, p.request.data, p.error)) return failure(std::move(p.error));
  p.ok = true;
  return p;
}

std::string infer_response_json(std::string_view model_name, std::string_view id, const float* y, int rows,
                                int output_dim) {
  std::string out = R"({"model_name":)" + json(std::string(model_name)).dump(-1, ' ', false, json::error_handler_t::replace);
  if (!id.empty()) out += R"(,"id":)" + json(std::string(id)).dump(-1, ' ', false, json::error_handler_t::replace);
  out += fmt::format(R"(,"outputs":[{{"name":"output","shape":[{},{}],"datatype":"FP32","data":[)", rows, output_dim);
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(output_dim);
  auto it = std::back_inserter(out);
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out.push_back(',');
    // Shortest text that reads back as the same float; NaN/inf cannot occur in JSON.
    if (std::isfinite(y[i]))
      fmt::format_to(it, "{}", y[i]);
    else
      out += "null";
  }
  out += "]}]}";
  return out;
}

std::string error_json(std::string_view message) {
  return json{{"error", std::string(message)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace chaosbench::bench::serve
