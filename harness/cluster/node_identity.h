// Each node's own name, for programs that find their peers by hostname: a UTS namespace
// whose hostname is "node<N>", and a mount namespace in which /etc/hosts names every node
// of the cluster at its address, so that gethostname() -> getaddrinfo() inside a node
// gives that node's address (gloo, NCCL's socket transport and PyTorch's TensorPipe
// advertise what the hostname resolves to; the host's own /etc/hosts says loopback).
//
// The mount namespace is a copy of the host's, a slave of it (mounts made on the host
// later still appear inside; nothing made inside leaks out), with read-only bind mounts
// of the run's hosts file over /etc/hosts and of a per-node file over /etc/hostname, an
// empty tmpfs over nscd's socket directory where there is one, and, where the host's
// /etc/nsswitch.conf asks another source before the files (systemd-resolved, say), a copy
// of it whose hosts line reads "files dns": lookups read the run's file.
//
// Namespaces are held by file descriptors (O_CLOEXEC), as the network namespaces of
// NetnsCluster: when this object and every process in them are gone, the kernel frees
// them, so a crash leaves nothing behind. A short-lived helper process per node makes
// them (unshare in a forked child, since a thread of a threaded process cannot leave its
// mount namespace alone) and exits once the descriptors are open.
// Threads: build from one thread; the fds may be read from any.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::harness {

class NodeIdentity {
 public:
  // One UTS and one mount namespace per node, node n named hostname(n) at addresses[n].
  // `files_dir` (private to the run) receives the hosts and hostname files. Throws
  // HostError when the namespaces cannot be made (needs root: CAP_SYS_ADMIN).
  NodeIdentity(const std::vector<std::string>& addresses, const std::string& files_dir);
  ~NodeIdentity();  // closes every fd: the kernel frees the namespaces with their last user
  NodeIdentity(const NodeIdentity&) = delete;
  NodeIdentity& operator=(const NodeIdentity&) = delete;

  static std::string hostname(int node);  // "node<N>"
  // The text of the cluster's /etc/hosts: localhost, then every node's address and name.
  static std::string hosts_file(const std::vector<std::string>& addresses);
  // `nsswitch` (the host's nsswitch.conf) with its hosts line made "hosts: files dns", or
  // "" when the files already come first (or there is no hosts line: glibc then reads
  // the files first anyway).
  static std::string nsswitch_files_first(const std::string& nsswitch);

  int uts_fd(int node) const { return uts_fds_.at(static_cast<std::size_t>(node)); }
  int mnt_fd(int node) const { return mnt_fds_.at(static_cast<std::size_t>(node)); }

 private:
  void make_node(int node, const std::string& hosts_path, const std::string& hostname_path,
                 const std::string& nsswitch_path);

  std::vector<int> uts_fds_;
  std::vector<int> mnt_fds_;
};

}  // namespace chaosbench::harness
