// Working inside a network namespace held by a file descriptor: switching the calling
// thread in and out, and running a program (iptables, tc, ping) inside one. The virtual
// cluster (harness/cluster) holds the namespaces; network faults act inside them.
//
// Threads: a network namespace is a per-thread attribute, so in_netns() affects only the
// calling thread, and sockets made inside stay bound to that namespace afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace chaosbench::common {

// Runs `fn` with the calling thread inside `netns_fd`, then switches back (also when `fn`
// throws). Throws std::system_error when setns fails (needs CAP_SYS_ADMIN).
void in_netns(int netns_fd, const std::function<void()>& fn);

// A new, empty network namespace held by the returned fd (O_CLOEXEC); the calling thread
// stays where it was. Closing the fd (and every socket and process in it) frees it.
// Throws std::system_error (needs CAP_SYS_ADMIN).
int new_netns();

// Moves the calling thread into `netns_fd` for good (a thread that serves one namespace).
void enter_netns(int netns_fd);

// The namespace's cookie (SO_NETNS_COOKIE, Linux 5.14+): unlike its inode number, never
// reused while the machine runs, so it tells a namespace apart from a later one. 0 when
// the kernel has none.
std::uint64_t netns_cookie(int netns_fd);

struct CommandOutput {
  int exit_code = -1;  // -1: killed by a signal, timed out, or could not start
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv (no shell; argv[0] is searched in PATH) inside `netns_fd` (-1: this namespace),
// with stdin from /dev/null and output captured; SIGKILLs it after `limit`. Blocks.
// `environment` ("NAME=value" strings): the program's whole environment; nullptr: this
// process's.
CommandOutput run_in_netns(int netns_fd, const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                           const std::vector<std::string>* environment = nullptr);

}  // namespace chaosbench::common
