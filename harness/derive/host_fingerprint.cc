#include "harness/derive/host_fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/doctor/cpu_identity.h"
#include "harness/doctor/host_identity.h"

#ifndef CHAOSBENCH_GIT_COMMIT
#define CHAOSBENCH_GIT_COMMIT ""
#endif

namespace chaosbench::harness {
namespace {

// The extensions that decide which kernels BLAS, the int8 paths and compilers pick.
constexpr const char* kIsaFlags[] = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                                     "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "Model:" of each GPU the NVIDIA driver lists, with the driver's version.
std::vector<std::string> nvidia_gpus() {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path dir("/proc/driver/nvidia/gpus");
  if (!std::filesystem::is_directory(dir, ec)) return out;
  std::string driver;
  std::istringstream version(read_text("/proc/driver/nvidia/version"));
  for (std::string word; version >> word;)
    if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) {
      driver = word;
      break;
    }
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::istringstream info(read_text(entry.path() / "information"));
    for (std::string line; std::getline(info, line);)
      if (line.rfind("Model:", 0) == 0) {
        const auto name = line.substr(line.find_first_not_of(" \t", 6));
        out.push_back(driver.empty() ? name : fmt::format("{} (driver {})", name, driver));
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string sha256_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1) return "";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

void add_host_fingerprint(reports::Environment& env) {
  if (const char* testbed = std::getenv("CHAOSBENCH_TESTBED")) env.testbed = testbed;
  const auto cpu = read_cpuinfo();
  env.cpu_model = cpu.name;
  for (const char* flag : kIsaFlags)
    if (cpu.flags.contains(flag)) env.cpu_flags.emplace_back(flag);
  env.memory_bytes = parse_mem_total(read_text("/proc/meminfo")).value_or(0);
  env.gpus = nvidia_gpus();
#if defined(__clang__)
  env.compiler = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  env.compiler = fmt::format("g++ {}", __VERSION__);
#endif
  env.git_commit = CHAOSBENCH_GIT_COMMIT;
}

}  // namespace chaosbench::harness
