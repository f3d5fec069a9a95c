#include "harness/cluster/node_identity.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "common/files/safe_files.h"
#include "harness/core/host_error.h"

namespace chaosbench::harness {
namespace {

// What the helper did, as one 8-byte write on a pipe (atomic): stage 0 is success.
enum class Stage : int { kOk = 0, kUnshare, kSlave, kHostname, kHosts, kHostnameFile, kNscd, kNsswitch };
struct Report {
  int stage;
  int err;
};

const char* stage_text(Stage s) {
  switch (s) {
    case Stage::kUnshare: return "unshare(CLONE_NEWUTS|CLONE_NEWNS)";
    case Stage::kSlave: return "making / a slave mount";
    case Stage::kHostname: return "sethostname";
    case Stage::kHosts: return "bind-mounting the cluster's hosts file over /etc/hosts";
    case Stage::kHostnameFile: return "bind-mounting the node's /etc/hostname";
    case Stage::kNscd: return "hiding nscd's socket";
    case Stage::kNsswitch: return "bind-mounting an nsswitch.conf that reads the files first";
    case Stage::kOk: break;
  }
  return "";
}

// Prepared before fork: the child of a threaded process makes system calls only.
struct HelperPlan {
  const char* hostname;
  std::size_t hostname_len;
  const char* hosts_path;
  const char* hostname_path;  // nullptr: the host has no /etc/hostname
  const char* nscd_dir;       // nullptr: no nscd socket directory
  const char* nsswitch_path;  // nullptr: the host's nsswitch.conf reads the files first
  pid_t parent;
  int report_fd;
  int wait_fd;
  int wait_write_fd;
};

void report(int fd, Stage stage, int err) {
  Report r{static_cast<int>(stage), err};
  while (::write(fd, &r, sizeof r) < 0 && errno == EINTR) {
  }
}

[[noreturn]] void fail(const HelperPlan& p, Stage stage) {
  report(p.report_fd, stage, errno);
  ::_exit(1);
}

bool bind_read_only(const char* source, const char* target) {
  return ::mount(source, target, nullptr, MS_BIND, nullptr) == 0 &&
         ::mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) == 0;
}

[[noreturn]] void helper_main(const HelperPlan& p) {
  ::close(p.wait_write_fd);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != p.parent) ::_exit(1);
  if (::unshare(CLONE_NEWUTS | CLONE_NEWNS) != 0) fail(p, Stage::kUnshare);
  // Host mounts keep propagating in; nothing mounted here propagates out.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) fail(p, Stage::kSlave);
  if (::sethostname(p.hostname, p.hostname_len) != 0) fail(p, Stage::kHostname);
  if (!bind_read_only(p.hosts_path, "/etc/hosts")) fail(p, Stage::kHosts);
  if (p.hostname_path != nullptr && !bind_read_only(p.hostname_path, "/etc/hostname")) fail(p, Stage::kHostnameFile);
  if (p.nsswitch_path != nullptr && !bind_read_only(p.nsswitch_path, "/etc/nsswitch.conf"))
    fail(p, Stage::kNsswitch);
  if (p.nscd_dir != nullptr &&
      ::mount("tmpfs", p.nscd_dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755") != 0)
    fail(p, Stage::kNscd);
  report(p.report_fd, Stage::kOk, 0);
  // Stay until the parent has opened our namespaces: it closes the pipe then (or dies).
  char byte;
  while (::read(p.wait_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  ::_exit(0);
}

// Mode 0644: every workload reads these, whoever it runs as.
void write_file(const std::string& path, const std::string& text) {
  if (std::string error = common::write_file_atomically(path, text, 0644); !error.empty()) throw HostError(error);
}

bool exists(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0;
}

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw HostError(fmt::format("pipe: {}", std::strerror(errno)));
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (r >= 0) ::close(r);
    r = -1;
  }
  void close_write() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

}  // namespace

std::string NodeIdentity::hostname(int node) { return fmt::format("node{}", node); }

std::string NodeIdentity::hosts_file(const std::vector<std::string>& addresses) {
  std::string text =
      "# The nodes of a chaosbench cluster in network namespaces (written by the run)\n"
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n";
  for (std::size_t n = 0; n < addresses.size(); ++n)
    text += fmt::format("{}\t{}\n", addresses[n], hostname(static_cast<int>(n)));
  return text;
}

std::string NodeIdentity::nsswitch_files_first(const std::string& nsswitch) {
  std::istringstream in(nsswitch);
  std::string out, line;
  bool changed = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, first;
    words >> key >> first;
    if (key == "hosts:" && first != "files") {
      line = "hosts: files dns";
      changed = true;
    }
    out += line + "\n";
  }
  return changed ? out : "";
}

NodeIdentity::NodeIdentity(const std::vector<std::string>& addresses, const std::string& files_dir) {
  const std::string hosts_path = files_dir + "/hosts";
  write_file(hosts_path, hosts_file(addresses));
  std::string nsswitch_path;
  {
    std::ifstream in("/etc/nsswitch.conf");
    std::stringstream text;
    text << in.rdbuf();
    const std::string ours = in ? nsswitch_files_first(text.str()) : "";
    if (!ours.empty()) {
      nsswitch_path = files_dir + "/nsswitch.conf";
      write_file(nsswitch_path, ours);
    }
  }
  try {
    for (std::size_t n = 0; n < addresses.size(); ++n) {
      const int node = static_cast<int>(n);
      const std::string hostname_path = fmt::format("{}/hostname.node{}", files_dir, node);
      write_file(hostname_path, hostname(node) + "\n");
      make_node(node, hosts_path, hostname_path, nsswitch_path);
    }
  } catch (...) {
    for (int fd : uts_fds_) ::close(fd);
    for (int fd : mnt_fds_) ::close(fd);
    throw;
  }
}

NodeIdentity::~NodeIdentity() {
  for (int fd : uts_fds_) ::close(fd);
  for (int fd : mnt_fds_) ::close(fd);
}

void NodeIdentity::make_node(int node, const std::string& hosts_path, const std::string& hostname_path,
                             const std::string& nsswitch_path) {
  const std::string name = hostname(node);
  const char* nscd = exists("/run/nscd") ? "/run/nscd" : exists("/var/run/nscd") ? "/var/run/nscd" : nullptr;
  Pipe reports, wait;
  HelperPlan plan{name.c_str(), name.size(), hosts_path.c_str(),
                  exists("/etc/hostname") ? hostname_path.c_str() : nullptr,
                  nscd, nsswitch_path.empty() ? nullptr : nsswitch_path.c_str(), ::getpid(), reports.w, wait.r,
                  wait.w};
  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &saved);  // no harness handler may run in the helper
  const pid_t pid = ::fork();
  if (pid == 0) helper_main(plan);
  const int fork_err = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) throw HostError(fmt::format("fork: {}", std::strerror(fork_err)));
  reports.close_write();
  wait.close_read();
  Report r{-1, 0};
  ssize_t got;
  do {
    got = ::read(reports.r, &r, sizeof r);
  } while (got < 0 && errno == EINTR);
  int uts = -1, mnt = -1;
  if (got == sizeof r && r.stage == 0) {
    uts = ::open(fmt::format("/proc/{}/ns/uts", pid).c_str(), O_RDONLY | O_CLOEXEC);
    mnt = ::open(fmt::format("/proc/{}/ns/mnt", pid).c_str(), O_RDONLY | O_CLOEXEC);
  }
  const int open_err = errno;
  wait.close_write();  // the helper exits
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != sizeof r) throw HostError(fmt::format("naming {}: the helper process died", name));
  if (r.stage != 0)
    throw HostError(fmt::format("naming {}: {}: {}", name, stage_text(static_cast<Stage>(r.stage)), std::strerror(r.err)));
  if (uts < 0 || mnt < 0) {
    if (uts >= 0) ::close(uts);
    if (mnt >= 0) ::close(mnt);
    throw HostError(fmt::format("naming {}: opening its namespaces: {}", name, std::strerror(open_err)));
  }
  uts_fds_.push_back(uts);
  mnt_fds_.push_back(mnt);
}

}  // namespace chaosbench::harness
