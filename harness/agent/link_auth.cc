#include "harness/agent/link_auth.h"

#include <array>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdexcept>

#include "common/files/safe_files.h"

namespace chaosbench::harness {
namespace {

std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

}  // namespace

std::string make_link_secret() { return common::random_hex(64); }
std::string make_link_nonce() { return common::random_hex(32); }

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), mac.data(), &length))
    throw std::runtime_error("HMAC-SHA256 failed");
  return to_hex(mac.data(), length);
}

std::string link_proof(std::string_view secret, std::string_view run_id, std::string_view role, std::string_view nonce) {
  // Fields joined by a byte none of them holds (ids, roles and nonces are printable).
  return hmac_sha256_hex(secret, fmt::format("chaosbench-link-v1\n{}\n{}\n{}", run_id, role, nonce));
}

bool check_link_proof(std::string_view secret, std::string_view run_id, std::string_view role, std::string_view nonce,
                      std::string_view proof) {
  const std::string expected = link_proof(secret, run_id, role, nonce);
  return proof.size() == expected.size() && CRYPTO_memcmp(proof.data(), expected.data(), expected.size()) == 0;
}

}  // namespace chaosbench::harness
