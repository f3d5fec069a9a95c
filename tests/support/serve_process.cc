#include "serve_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace chaosbench::test
