// The built-in transformer's tokenizer: one token per byte (0..255) plus two specials,
// so any text, in any encoding, round-trips and a prompt's token count is its byte count
// (what openai_request.h already tells clients). A token's text is its one byte: a UTF-8
// character may span tokens, so a streamed piece can be an incomplete sequence (the
// response writer replaces what is invalid; it never produces invalid JSON).
// Pure functions: thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::bench::llm {

class ByteTokenizer {
 public:
  static constexpr int kEos = 256;    // ends an answer (finish "stop")
  static constexpr int kBos = 257;    // starts every sequence, so an empty prompt has a position
  static constexpr int kVocab = 258;

  // BOS, then the bytes of `text`.
  static std::vector<int> encode(std::string_view text);
  // The bytes of the byte tokens, in order; specials have no text.
  static std::string decode(const std::vector<int>& tokens);
  // One token's text: its byte, or "" for a special.
  static std::string_view text(int token);
};

}  // namespace chaosbench::bench::llm
