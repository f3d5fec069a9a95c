// Helpers for tests that run the chaosbench binary: a temporary directory removed on
// scope exit (also when an assertion fails), and running a command with a time limit.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace chaosbench::test {

class TempDir {
 public:
  TempDir();   // mkdtemp under /tmp
  ~TempDir();  // rm -r
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  double seconds = 0;
  std::string out;
  std::string err;
};

// Runs argv (no shell) with stdout/stderr captured; kills it (SIGKILL to its process
// group) after `limit`. `on_started(pid)` runs right after the start, for tests that
// signal the process.
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                          void (*on_started)(int pid) = nullptr);

// True (after a Catch2 WARN with `why`) when the test must skip because it is not root.
bool skip_without_root(const char* why);

// The chaosbench binary under test and the source tree.
std::string binary();
std::string source(const std::string& relative);
std::string read_file(const std::string& path);

// How often `what` stands in `text`, counting non-overlapping places from the left.
std::size_t occurrences(const std::string& text, const std::string& what);

}  // namespace chaosbench::test
