#include "serve_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace chaosbench::test {

ServeProcess::ServeProcess(const std::vector<std::string>& extra_args, long nofile) {
  std::vector<std::string> argv{binary(), "worker", "serve", "--port", "0", "--layers", "8,16,4"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string log_path = dir_.file("log");
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::unsetenv("CHAOSBENCH_METRICS");
    if (nofile > 0) {
      const rlimit lim{static_cast<rlim_t>(nofile), static_cast<rlim_t>(nofile)};
      ::setrlimit(RLIMIT_NOFILE, &lim);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  const std::regex ready(R"(on [0-9.]+:([0-9]+))");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string text = log();
    if (std::regex_search(text, m, ready)) {
      port_ = static_cast<unsigned short>(std::stoi(m[1]));
      return;
    }
    if (!alive()) throw std::runtime_error("worker serve exited at start: " + text);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  throw std::runtime_error("worker serve did not start: " + log());
}

ServeProcess::~ServeProcess() {
  if (!alive()) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 500 && alive(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (alive()) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

bool ServeProcess::alive() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
  if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
  pid_ = -1;
  return false;
}

long ServeProcess::rss_kb() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

double ServeProcess::cpu_seconds() const {
  const std::string stat = read_file("/proc/" + std::to_string(pid_) + "/stat");
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i == 14 || i == 15) ticks += std::stol(field);
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string ServeProcess::log() const { return read_file(dir_.file("log")); }

int connect_local(unsigned short port, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {
bool fill(int fd, std::string& buffer) {
  char chunk[65536];
  const auto n = ::recv(fd, chunk, sizeof chunk, 0);
  if (n <= 0) return false;
  buffer.append(chunk, static_cast<std::size_t>(n));
  return true;
}
}  // namespace

HttpReply read_reply(int fd, std::string& pending) {
  HttpReply r;
  std::size_t head_end;
  while ((head_end = pending.find("\r\n\r\n")) == std::string::npos)
    if (!fill(fd, pending)) return r;
  const std::string head = pending.substr(0, head_end);
  if (head.size() < 12 || head.rfind("HTTP/1.", 0) != 0) return r;
  const int status = std::stoi(head.substr(9, 3));
  std::size_t length = 0;
  std::string lower = head;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (auto p = lower.find("content-length: "); p != std::string::npos) length = std::stoul(lower.substr(p + 16));
  r.closed = lower.find("connection: close") != std::string::npos;
  while (pending.size() < head_end + 4 + length)
    if (!fill(fd, pending)) return r;
  r.status = status;
  r.body = pending.substr(head_end + 4, length);
  pending.erase(0, head_end + 4 + length);
  return r;
}

bool wait_closed(int fd) {
  char chunk[4096];
  for (;;) {
    const auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

std::string request_text(const std::string& method, const std::string& target, const std::string& body) {
  return method + " " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

HttpReply http_request(unsigned short port, const std::string& method, const std::string& target,
                       const std::string& body) {
  const int fd = connect_local(port);
  if (fd < 0) return {};
  std::string pending;
  HttpReply r;
  if (send_all(fd, request_text(method, target, body))) r = read_reply(fd, pending);
  ::close(fd);
  return r;
}

}  // namespace chaosbench::test
