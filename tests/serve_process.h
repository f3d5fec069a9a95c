// A real `chaosbench worker serve` process for tests that must survive its crash or watch
// its resources: started with a small model on an ephemeral port (read from its log),
// optionally under a lower RLIMIT_NOFILE; SIGTERM then SIGKILL on destruction. Also a
// small blocking HTTP/1.1 exchange over a fresh or given socket.
// Threads: one owner thread; the HTTP helpers are free functions, safe from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "test_util.h"

namespace chaosbench::test {

class ServeProcess {
 public:
  // Blocks until the server prints its port (throws std::runtime_error after 30 s or when
  // it exits first). nofile > 0: the child's RLIMIT_NOFILE (soft and hard).
  explicit ServeProcess(const std::vector<std::string>& extra_args = {}, long nofile = 0);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool alive();                    // false once it exited (then exit_signal() says how)
  int exit_signal() const { return signal_; }  // the killing signal, 0 if none
  long rss_kb() const;             // VmRSS from /proc/<pid>/status
  double cpu_seconds() const;      // utime + stime from /proc/<pid>/stat
  std::string log() const;         // its stdout and stderr so far

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  unsigned short port_ = 0;
  int signal_ = 0;
};

struct HttpReply {
  int status = 0;     // 0: closed (or timed out) before a whole response
  std::string body;
  bool closed = false;  // the server closed the connection after this reply
};

// A connected TCP socket to 127.0.0.1:port with SO_RCVTIMEO/SO_SNDTIMEO of `timeout`; -1
// on failure.
int connect_local(unsigned short port, std::chrono::milliseconds timeout = std::chrono::seconds(5));
// Writes all of `bytes` (false when the peer closed or the timeout hit first).
bool send_all(int fd, const std::string& bytes);
// Reads one response (by Content-Length) from `fd`; `pending` keeps bytes past it.
HttpReply read_reply(int fd, std::string& pending);
// Reads until EOF or the timeout: true on EOF (the server closed).
bool wait_closed(int fd);
// One request on a fresh connection; the connection is closed afterwards.
HttpReply http_request(unsigned short port, const std::string& method, const std::string& target,
                       const std::string& body = "");
std::string request_text(const std::string& method, const std::string& target, const std::string& body);

}  // namespace chaosbench::test
