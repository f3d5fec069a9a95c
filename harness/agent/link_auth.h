// How the controller and an agent prove to each other that they belong to one run: a
// per-run secret (32 random bytes, hex) that reaches the agent through a private file or
// its standard input, never a command line or the environment `ps` can show. Each side
// proves it knows the secret by an HMAC-SHA256 (RFC 2104, OpenSSL's libcrypto) over the
// other side's fresh nonce and its own role, so neither a replayed hello nor a reflected
// proof is accepted. Compared in constant time.
// Threads: any.
#pragma once

#include <string>
#include <string_view>

namespace chaosbench::harness {

// 32 random bytes from getrandom(2), as 64 hex digits. Throws std::runtime_error when the
// kernel gives none.
std::string make_link_secret();
// 16 random bytes, as 32 hex digits: a handshake's nonce.
std::string make_link_nonce();

// HMAC-SHA256(key, data) as 64 hex digits.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// What `role` ("agent" or "controller") sends to prove it knows `secret`, answering the
// peer's `nonce` in run `run_id`.
std::string link_proof(std::string_view secret, std::string_view run_id, std::string_view role, std::string_view nonce);
// Whether `proof` is that, compared in constant time.
bool check_link_proof(std::string_view secret, std::string_view run_id, std::string_view role, std::string_view nonce,
                      std::string_view proof);

}  // namespace chaosbench::harness
