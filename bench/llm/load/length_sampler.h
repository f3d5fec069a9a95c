// Draws token lengths (a prompt's input length, a request's output length) from a fixed,
// uniform, normal or lognormal distribution, seeded and deterministic: the same spec and
// seed give the same lengths on every machine and standard library, because the
// transforms are written here over std::mt19937_64 (whose output the standard fixes)
// instead of std::normal_distribution and friends (whose algorithms it leaves open).
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace chaosbench::bench::llm {

enum class LengthDistribution { kFixed, kUniform, kNormal, kLognormal };

struct LengthSpec {
  LengthDistribution kind = LengthDistribution::kFixed;
  double mean = 128;        // fixed: the length; normal and lognormal: the lengths' mean
  double stddev = 0;        // normal and lognormal: the lengths' standard deviation
  std::int64_t low = 1;     // uniform: the range, both ends included
  std::int64_t high = 1;
  std::int64_t max = 4096;  // every draw is rounded, then clamped to [1, max]
};

// "" when `spec` can be drawn from, else what is wrong (for a scenario error message).
std::string validate(const LengthSpec& spec);

class LengthSampler {
 public:
  // `spec` must validate (checked: throws std::invalid_argument with validate's text).
  LengthSampler(const LengthSpec& spec, std::uint64_t seed);

  std::int64_t next();

  // Shared with the prompt text generator so one seed fixes a whole dataset.
  static double uniform01(std::mt19937_64& rng);    // [0, 1), 53 random bits
  static double standard_normal(std::mt19937_64& rng);  // Box–Muller, one value per call

 private:
  LengthSpec spec_;
  std::mt19937_64 rng_;
  double log_mu_ = 0, log_sigma_ = 0;  // lognormal: the underlying normal's parameters
};

}  // namespace chaosbench::bench::llm
