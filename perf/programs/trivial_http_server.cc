// trivial_http_server [--port P] [--threads N] — answers every HTTP/1.1 request with
// 200 and "{}" until SIGINT or SIGTERM. The endpoint perf/workloads/load_vs_wrk.sh measures wrk and
// the load generator against.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "bench/load/trivial_server.h"

int main(int argc, char** argv) {
  chaosbench::bench::load::TrivialServerOptions options;
  options.port = 8080;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0) options.port = static_cast<std::uint16_t>(std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--threads") == 0) options.threads = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--host") == 0) options.host = argv[i + 1];
    else {
      std::cerr << "usage: trivial_http_server [--host H] [--port P] [--threads N]\n";
      return 2;
    }
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before the server's threads start
  chaosbench::bench::load::TrivialServer server(options);
  std::cout << "listening on " << server.url() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  std::cout << "served " << server.requests() << " requests" << std::endl;
  return 0;
}
