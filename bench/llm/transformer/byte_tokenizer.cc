// The byte-level tokenizer. See byte_tokenizer.h.
#include "bench/llm/transformer/byte_tokenizer.h"

#include <array>

namespace chaosbench::bench::llm {
namespace {

// Every byte's one-character string, so text() can return a view that outlives the call.
const std::array<char, 256>& byte_table() {
  static const std::array<char, 256> table = [] {
    std::array<char, 256> t{};
    for (int b = 0; b < 256; ++b) t[static_cast<std::size_t>(b)] = static_cast<char>(b);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<int> ByteTokenizer::encode(std::string_view text) {
  std::vector<int> tokens;
  tokens.reserve(text.size() + 1);
  tokens.push_back(kBos);
  for (const char c : text) tokens.push_back(static_cast<unsigned char>(c));
  return tokens;
}

std::string ByteTokenizer::decode(const std::vector<int>& tokens) {
  std::string out;
  for (const int t : tokens) out += text(t);
  return out;
}

std::string_view ByteTokenizer::text(int token) {
  if (token < 0 || token >= 256) return {};
  return {byte_table().data() + token, 1};
}

}  // namespace chaosbench::bench::llm
