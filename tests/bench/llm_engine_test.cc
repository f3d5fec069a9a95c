// The built-in transformer (bench/llm/transformer/): the byte tokenizer, seeded weights,
// and the forward pass through the paged KV cache. The key check is that one batched
// forward over several sequences of different lengths, with their blocks interleaved in
// the cache, gives the logits each sequence gets alone: paging and batching change where
// K/V live and how rows are grouped into GEMMs, never the arithmetic's meaning.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench/llm/transformer/byte_tokenizer.h"
#include "bench/llm/transformer/token_sampler.h"
#include "bench/llm/transformer/transformer_model.h"

namespace llm_engine_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;

namespace {

TransformerModel::Shape tiny_shape(const char* dtype = "fp32") {
  TransformerModel::Shape s;
  s.layers = 2;
  s.dim = 32;
  s.heads = 4;
  s.kv_heads = 2;
  s.ffn = 48;
  s.dtype = dtype;
  return s;
}

// One sequence driven by hand: its tokens and block table in one cache.
struct Seq {
  std::vector<int> tokens;
  std::vector<int> table;
  int computed = 0;
};

void cover(PagedKvCache& cache, Seq& s, int positions) {
  while (static_cast<int>(s.table.size()) < cache.blocks_for(positions)) s.table.push_back(*cache.allocator().allocate());
}

// Runs the given sequences' pending tokens (up to `chunk` each) as one forward; appends
// each one's greedy next token when its chunk reaches its end; returns the logits rows.
std::vector<float> run_step(TransformerModel& model, PagedKvCache& cache, std::vector<Seq*> seqs, int chunk = 1 << 20) {
  std::vector<ForwardSegment> segments;
  for (Seq* s : seqs) {
    const int n = std::min(chunk, static_cast<int>(s->tokens.size()) - s->computed);
    cover(cache, *s, s->computed + n);
    segments.push_back({s->tokens.data() + s->computed, s->computed, n, s->table.data(),
                        s->computed + n == static_cast<int>(s->tokens.size())});
  }
  std::vector<float> logits;
  model.forward(segments, cache, logits);
  std::size_t row = 0;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    seqs[i]->computed += segments[i].count;
    if (segments[i].want_logits)
      seqs[i]->tokens.push_back(sample_token(logits.data() + row++ * model.vocab(), model.vocab(), {}, 0));
  }
  return logits;
}

double max_abs_diff(const float* a, const float* b, std::size_t n) {
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

std::vector<float> prefill_logits(TransformerModel& model, const std::string& prompt, int chunk) {
  auto cache = model.make_cache(64, 4);
  Seq s{ByteTokenizer::encode(prompt), {}, 0};
  std::vector<float> logits;
  while (logits.empty()) logits = run_step(model, cache, {&s}, chunk);  // until the prompt's end
  return logits;
}

}  // namespace

TEST_CASE("llm-engine: byte tokenizer round trip", "[llm-engine]") {
  const std::string text = std::string("h\xc3\xa9llo, w\xf0\x9f\x8c\x8d!\n") + std::string(1, '\0') + "\xff";
  const auto tokens = ByteTokenizer::encode(text);
  REQUIRE(tokens.size() == text.size() + 1);
  CHECK(tokens.front() == ByteTokenizer::kBos);
  CHECK(ByteTokenizer::decode(tokens) == text);
  CHECK(ByteTokenizer::text(ByteTokenizer::kEos).empty());
  CHECK(ByteTokenizer::text(0xc3) == "\xc3");
  CHECK(ByteTokenizer::encode("").size() == 1);
}

TEST_CASE("llm-engine: weights and logits are deterministic for a seed", "[llm-engine]") {
  TransformerModel a(tiny_shape(), 7, 64), b(tiny_shape(), 7, 64), c(tiny_shape(), 8, 64);
  const auto la = prefill_logits(a, "determinism", 1 << 20);
  const auto lb = prefill_logits(b, "determinism", 1 << 20);
  const auto lc = prefill_logits(c, "determinism", 1 << 20);
  CHECK(la == lb);
  CHECK(la != lc);
  TransformerModel threaded(tiny_shape(), 7, 64, chaosbench::bench::serve::Int8Path::kAuto, 2);
  CHECK(prefill_logits(threaded, "determinism", 1 << 20) == la);  // channels and rows split over two threads
  // Past 32 rows the prefill is OpenBLAS's sgemm on each thread's channels.
  const std::string longer(40, 'x');
  const auto one = prefill_logits(a, longer, 1 << 20), two = prefill_logits(threaded, longer, 1 << 20);
  REQUIRE(one.size() == two.size());
  CHECK(max_abs_diff(one.data(), two.data(), one.size()) < 1e-4);
  CHECK(std::all_of(la.begin(), la.end(), [](float v) { return std::isfinite(v); }));
}

TEST_CASE("llm-engine: batched decode equals one-at-a-time decode", "[llm-engine]") {
  TransformerModel model(tiny_shape(), 3, 128);
  const std::vector<std::string> prompts = {"a", "the quick brown fox", "0123456789abcdefghijklmnopqrstuvwxyz!"};
  constexpr int kSteps = 12;
  // Alone: each sequence in its own cache, prefill then one decode per forward.
  std::vector<std::vector<float>> alone(prompts.size());
  std::vector<std::vector<int>> alone_tokens;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    auto cache = model.make_cache(64, 4);
    Seq s{ByteTokenizer::encode(prompts[i]), {}, 0};
    for (int step = 0; step <= kSteps; ++step) {
      const auto l = run_step(model, cache, {&s});
      alone[i].insert(alone[i].end(), l.begin(), l.end());
    }
    alone_tokens.push_back(s.tokens);
  }
  // Together: one cache, prefill in chunks of a block, so the three take turns at its
  // blocks; one forward per step for every sequence still going.
  auto cache = model.make_cache(64, 4);
  std::vector<Seq> seqs;
  for (const auto& p : prompts) seqs.push_back({ByteTokenizer::encode(p), {}, 0});
  std::vector<std::vector<float>> together(prompts.size());
  const auto v = static_cast<std::size_t>(model.vocab());
  const std::size_t want_rows = (kSteps + 1) * v;
  for (;;) {
    std::vector<Seq*> going;
    std::vector<std::size_t> sampled;  // indices of those whose chunk reaches the end
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      if (together[i].size() >= want_rows) continue;
      going.push_back(&seqs[i]);
      if (seqs[i].computed + std::min(4, static_cast<int>(seqs[i].tokens.size()) - seqs[i].computed) ==
          static_cast<int>(seqs[i].tokens.size()))
        sampled.push_back(i);
    }
    if (going.empty()) break;
    const auto l = run_step(model, cache, going, 4);
    for (std::size_t r = 0; r < sampled.size(); ++r)
      together[sampled[r]].insert(together[sampled[r]].end(), l.begin() + r * v, l.begin() + (r + 1) * v);
  }
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    INFO("sequence " << i);
    CHECK(seqs[i].tokens == alone_tokens[i]);
    REQUIRE(together[i].size() == alone[i].size());
    CHECK(max_abs_diff(together[i].data(), alone[i].data(), alone[i].size()) < 1e-4);
  }
  CHECK(seqs[2].table[1] - seqs[2].table[0] != 1);  // the blocks are interleaved
}

TEST_CASE("llm-engine: chunked prefill equals full prefill", "[llm-engine]") {
  TransformerModel model(tiny_shape(), 5, 128);
  const std::string prompt = "chunked prefill splits a long prompt over several steps";
  const auto full = prefill_logits(model, prompt, 1 << 20);
  for (const int chunk : {1, 5, 8, 16}) {
    INFO("chunk " << chunk);
    const auto chunked = prefill_logits(model, prompt, chunk);
    REQUIRE(chunked.size() == full.size());
    CHECK(max_abs_diff(chunked.data(), full.data(), full.size()) < 1e-4);
  }
}

// int8 weights (per-channel) and activations (per-row) against fp32: the logits stay
// within 5% of the fp32 logits' range, and the portable kernel gives the VNNI bits.
TEST_CASE("llm-engine: int8 logits stay within tolerance of fp32", "[llm-engine]") {
  TransformerModel fp32(tiny_shape("fp32"), 9, 128), int8(tiny_shape("int8"), 9, 128);
  TransformerModel portable(tiny_shape("int8"), 9, 128, chaosbench::bench::serve::Int8Path::kPortable);
  const std::string prompt = "int8 against fp32";
  const auto ref = prefill_logits(fp32, prompt, 1 << 20);
  const auto q = prefill_logits(int8, prompt, 1 << 20);
  double range = 0;
  for (const float v : ref) range = std::max(range, std::fabs(static_cast<double>(v)));
  const double diff = max_abs_diff(ref.data(), q.data(), ref.size());
  INFO("max |int8 - fp32| = " << diff << ", max |fp32| = " << range);
  CHECK(diff < 0.05 * range);
  CHECK(int8.weight_bytes() * 3 < fp32.weight_bytes());
  CHECK(prefill_logits(portable, prompt, 1 << 20) == q);
  TransformerModel split(tiny_shape("int8"), 9, 128, chaosbench::bench::serve::Int8Path::kAuto, 2);
  CHECK(prefill_logits(split, prompt, 1 << 20) == q);  // channel ranges on two threads: the same bits
}

TEST_CASE("llm-engine: seeded sampling is deterministic and greedy is argmax", "[llm-engine]") {
  std::vector<float> logits(ByteTokenizer::kVocab, 0.0f);
  logits[42] = 3.0f;
  logits[ByteTokenizer::kBos] = 9.0f;  // never drawn
  logits[ByteTokenizer::kEos] = 5.0f;
  CHECK(sample_token(logits.data(), ByteTokenizer::kVocab, {}, 0) == ByteTokenizer::kEos);
  SamplingParams no_eos;
  no_eos.ignore_eos = true;
  CHECK(sample_token(logits.data(), ByteTokenizer::kVocab, no_eos, 0) == 42);
  SamplingParams hot{1.0, 0.9, 1234, false};
  std::vector<int> first, second;
  for (std::uint64_t i = 0; i < 50; ++i) {
    first.push_back(sample_token(logits.data(), ByteTokenizer::kVocab, hot, i));
    second.push_back(sample_token(logits.data(), ByteTokenizer::kVocab, hot, i));
  }
  CHECK(first == second);
  CHECK(std::count(first.begin(), first.end(), ByteTokenizer::kBos) == 0);
  hot.seed = 99;
  std::vector<int> other;
  for (std::uint64_t i = 0; i < 50; ++i) other.push_back(sample_token(logits.data(), ByteTokenizer::kVocab, hot, i));
  CHECK(other != first);
}

}  // namespace llm_engine_test
