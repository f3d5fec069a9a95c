// What the OpenAI-compatible server (llm_http_server.h) listens on, its bounds and its
// model: the HTTP server core's settings (bench/http/server_config.h: host, port, threads,
// the engine's timers running on them too; header_limit 8 KiB, request_timeout 30 s for
// reading a request and for each write of an answer, idle_timeout 60 s) with this
// server's defaults, and the model's.
#pragma once

#include <cstddef>
#include <string>

#include "bench/http/server_config.h"

namespace chaosbench::bench::llm {

struct LlmServerConfig : http::ServerConfig {
  LlmServerConfig() {
    body_limit = 1u << 20;      // 413 past it
    max_connections = 1024;     // 503 and close past it
    max_buffered = 1ull << 62;  // connections only: bodies are bounded by body_limit
    no_delay = true;            // one small write per token
    name = "llm-serve";
  }
  std::string model = "chaosbench-tiny";
  int context_tokens = 2048;      // prompt + max_tokens must fit (400 context_length_exceeded)
  std::size_t max_running = 256;  // requests generating at once; 429 past it
};

}  // namespace chaosbench::bench::llm
