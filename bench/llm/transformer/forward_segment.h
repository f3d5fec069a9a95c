// One sequence's share of a forward pass of the built-in transformer: `count` tokens at
// positions start..start+count-1 (a decode is one token; a prefill chunk is several), the
// sequence's KV block table, and whether the logits after its last token are wanted (the
// chunk reaches the sequence's end, so its next token is sampled).
// A plain view: it points into the scheduler's sequence, valid for one forward().
#pragma once

namespace chaosbench::bench::llm {

struct ForwardSegment {
  const int* tokens = nullptr;       // count token ids
  int start = 0;                     // position of tokens[0]
  int count = 0;
  const int* block_table = nullptr;  // covers positions 0..start+count-1
  bool want_logits = false;
};

}  // namespace chaosbench::bench::llm
