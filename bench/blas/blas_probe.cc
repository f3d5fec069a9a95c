#include "bench/blas/blas_probe.h"

#include <cblas.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace chaosbench::bench::blas {
namespace {

using Clock = std::chrono::steady_clock;

// Deterministic values in [-1, 1) (a 64-bit LCG's top bits): no library RNG, same everywhere.
std::vector<float> values(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(static_cast<double>(s >> 40) / static_cast<double>(1ULL << 24) * 2.0 - 1.0);
  }
  return v;
}

struct Shape {
  CBLAS_ORDER order;
  CBLAS_TRANSPOSE ta, tb;
  int m, n, k;
  float beta;
};

// Element (i, j) of op(X) for a matrix stored with leading dimension ld.
double at(const std::vector<float>& x, CBLAS_ORDER order, CBLAS_TRANSPOSE t, int ld, int i, int j) {
  const bool rows = (order == CblasRowMajor) == (t == CblasNoTrans);
  return rows ? x[static_cast<std::size_t>(i) * ld + j] : x[static_cast<std::size_t>(j) * ld + i];
}

// The worst normalised error of one product against the exact result in double.
double check(const Shape& s, std::uint64_t seed) {
  const bool row = s.order == CblasRowMajor;
  // op(A) is m x k, op(B) k x n; stored as given by order and transposition.
  const int a_rows = (s.ta == CblasNoTrans) == row ? s.m : s.k, a_cols = s.m + s.k - a_rows;
  const int b_rows = (s.tb == CblasNoTrans) == row ? s.k : s.n, b_cols = s.k + s.n - b_rows;
  const int lda = a_cols, ldb = b_cols, ldc = row ? s.n : s.m;
  const auto a = values(static_cast<std::size_t>(a_rows) * a_cols, seed);
  const auto b = values(static_cast<std::size_t>(b_rows) * b_cols, seed + 1);
  auto c = values(static_cast<std::size_t>(s.m) * s.n, seed + 2);
  const auto c0 = c;
  cblas_sgemm(s.order, s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, s.beta, c.data(), ldc);
  double worst = 0;
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double exact = 0, scale = 0;
      for (int p = 0; p < s.k; ++p) {
        const double term = at(a, s.order, s.ta, lda, i, p) * at(b, s.order, s.tb, ldb, p, j);
        exact += term;
        scale += std::abs(term);
      }
      const std::size_t ci = row ? static_cast<std::size_t>(i) * ldc + j : static_cast<std::size_t>(j) * ldc + i;
      exact += static_cast<double>(s.beta) * c0[ci];
      scale += std::abs(static_cast<double>(s.beta) * c0[ci]);
      const double err = std::abs(static_cast<double>(c[ci]) - exact) / std::max(scale, 1e-30);
      if (!(err <= worst)) worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
    }
  }
  return worst;
}

}  // namespace

BlasMeasurement measure_blas(int n, double min_seconds) {
  openblas_set_num_threads(1);
  BlasMeasurement m;
  m.corename = openblas_get_corename();
  m.config = openblas_get_config();
  while (!m.config.empty() && m.config.back() == ' ') m.config.pop_back();
  m.n = n;
  // The shapes the trainer uses (row-major, A^T and B^T), odd sizes so that every edge
  // kernel runs, and column-major as Fortran callers (PyTorch) use it.
  const Shape shapes[] = {
      {CblasRowMajor, CblasNoTrans, CblasNoTrans, 67, 129, 255, 0.0f},
      {CblasRowMajor, CblasNoTrans, CblasTrans, 64, 97, 131, 0.0f},
      {CblasRowMajor, CblasTrans, CblasNoTrans, 131, 77, 64, 0.5f},
      {CblasColMajor, CblasNoTrans, CblasNoTrans, 200, 33, 300, 1.0f},
  };
  std::uint64_t seed = 1;
  for (const auto& s : shapes) m.max_error = std::max(m.max_error, check(s, seed += 3));

  const auto elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements, 0.0f);
  auto once = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  once();  // warm-up: packing buffers, page faults, the clock
  double best = std::numeric_limits<double>::infinity();
  int reps = 0;
  const auto start = Clock::now();
  while (reps < 3 || std::chrono::duration<double>(Clock::now() - start).count() < min_seconds) {
    const auto t0 = Clock::now();
    once();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    ++reps;
  }
  m.gflops = 2.0 * n * static_cast<double>(n) * n / best / 1e9;
  // 0.5 * 0.25 summed n times is exact in float for these n.
  const bool exact = c.front() == 0.125f * static_cast<float>(n) && c.back() == 0.125f * static_cast<float>(n);
  m.correct = exact && m.max_error < kMaxError;
  return m;
}

std::string probe_json(const BlasMeasurement& m, const std::optional<CpuPeak>& peak) {
  nlohmann::ordered_json j;
  j["corename"] = m.corename;
  j["config"] = m.config;
  j["n"] = m.n;
  j["gflops"] = m.gflops;
  j["max_error"] = std::isfinite(m.max_error) ? nlohmann::ordered_json(m.max_error) : nlohmann::ordered_json(nullptr);
  j["correct"] = m.correct;
  if (peak && peak->known) {
    j["cpu"] = {{"isa", peak->isa},           {"lanes", peak->lanes},
                {"fma_units", peak->fma_units}, {"clock_ghz", peak->clock_ghz},
                {"nominal_ghz", peak->nominal_ghz}, {"fma_gflops", peak->fma_gflops},
                {"peak_gflops", peak->peak_gflops}};
  }
  return j.dump();
}

std::string blas_library_identity() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) == 0 || info.dli_fname == nullptr) return "";
  struct stat st {};
  if (::stat(info.dli_fname, &st) != 0) return info.dli_fname;
  return fmt::format("{} {} {}", info.dli_fname, static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtime));
}

}  // namespace chaosbench::bench::blas
