#include "harness/doctor/host_probe.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <optional>
#include <string>
#include <fmt/format.h>
#include <fstream>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "bench/train/device_factory.h"
#include "common/files/install_layout.h"
#include "harness/doctor/cgroup_probe.h"
#include "harness/doctor/fault_backends.h"
#include "harness/doctor/host_identity.h"
#include "harness/doctor/kernel_features.h"
#include "harness/doctor/probe_files.h"

namespace chaosbench::harness {
namespace {

using S = CapabilityStatus;
using Clock = std::chrono::steady_clock;

// A forked child unshares a network namespace and exits at once; the namespace dies with
// it, so nothing remains. Only unshare(2) and _exit(2) run in the child (fork-safe).
Capability probe_netns_unshare(const HostIdentity& host) {
  Capability cap{"netns.unshare", "namespaces", S::kUnknown, {}, {}};
  if (!host.root && !host.cap_sys_admin) {
    cap.detail = "not tried: needs root or CAP_SYS_ADMIN";
    return cap;
  }
  const auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    cap.detail = fmt::format("not tried: fork failed: {}", std::strerror(errno));
    return cap;
  }
  if (pid == 0) _exit(::unshare(CLONE_NEWNET) == 0 ? 0 : (errno > 0 && errno < 256 ? errno : 255));
  int status = 0;
  pid_t done = 0;
  const auto deadline = start + std::chrono::seconds(2);
  while (Clock::now() < deadline) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done > 0 || (done < 0 && errno != EINTR)) break;
    done = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);  // our own child, by its pid
    ::waitpid(pid, &status, 0);
    cap.detail = "child did not exit within 2 s";
    return cap;
  }
  if (done < 0 || !WIFEXITED(status)) {
    cap.detail = "child ended abnormally";
    return cap;
  }
  auto ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (WEXITSTATUS(status) == 0) {
    cap.status = S::kOk;
    cap.detail = fmt::format("a child unshared a network namespace and exited ({:.1f} ms)", ms);
  } else {
    cap.status = S::kMissing;
    cap.detail = fmt::format("unshare(CLONE_NEWNET) failed: {}", std::strerror(WEXITSTATUS(status)));
  }
  return cap;
}

std::vector<Capability> namespace_capabilities(const HostIdentity& host) {
  std::vector<Capability> caps;
  if (path_exists("/proc/self/ns/net"))
    caps.push_back({"netns", "namespaces", S::kOk, "/proc/self/ns/net present", {}});
  else
    caps.push_back({"netns", "namespaces", S::kMissing, "no /proc/self/ns/net (kernel without CONFIG_NET_NS?)", {}});
  caps.push_back(probe_netns_unshare(host));
  // User namespaces: what a later unprivileged mode needs; read-only check of the limit.
  {
    std::ifstream in("/proc/sys/user/max_user_namespaces");
    long long max = -1;
    if (in >> max && max > 0)
      caps.push_back({"userns", "namespaces", S::kOk, fmt::format("user namespaces allowed (max_user_namespaces {})", max), {}});
    else if (max == 0)
      caps.push_back({"userns", "namespaces", S::kMissing, "max_user_namespaces is 0", "unprivileged runs cannot make namespaces"});
    else
      caps.push_back({"userns", "namespaces", S::kUnknown, "no /proc/sys/user/max_user_namespaces", {}});
  }
  return caps;
}

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_on_path(std::string_view name) {
  const char* env = std::getenv("PATH");
  std::string_view path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = path.find(':');
    auto dir = path.substr(0, colon);
    std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    path.remove_prefix(colon + 1);
  }
}

// Which iptables this is, told by where its link chain ends (Debian: iptables ->
// /etc/alternatives/iptables -> iptables-nft -> xtables-nft-multi), without running it.
std::string iptables_variant(const std::string& path) {
  std::error_code ec;
  auto target = std::filesystem::canonical(path, ec).filename().string();
  if (ec) return "variant unknown";
  if (target.find("nft") != std::string::npos) return fmt::format("nf_tables variant ({})", target);
  if (target.find("legacy") != std::string::npos) return fmt::format("legacy variant ({})", target);
  return fmt::format("variant not told by its link target ({})", target);
}

std::vector<Capability> tool_capabilities() {
  std::vector<Capability> caps;
  for (std::string_view tool : {"ip", "tc", "iptables", "ping", "iperf3"}) {
    Capability cap{std::string(tool), "tools", S::kMissing, "not on PATH", {}};
    if (auto path = find_on_path(tool)) {
      cap.status = S::kOk;
      cap.detail = tool == "iptables" ? fmt::format("{}, {}", *path, iptables_variant(*path)) : *path;
    } else {
      // Non-root shells often lack the sbin directories.
      for (auto dir : {"/usr/sbin", "/sbin", "/usr/bin"})
        if (auto p = fmt::format("{}/{}", dir, tool); is_executable_file(p)) {
          cap.detail = fmt::format("not on PATH (found {})", p);
          break;
        }
    }
    caps.push_back(std::move(cap));
  }
  return caps;
}

std::vector<Capability> gpu_capabilities() {
  std::vector<Capability> caps;
  if (path_exists("/dev/nvidia0"))
    caps.push_back({"nvidia_device", "gpu", S::kOk, "/dev/nvidia0 present", {}});
  else
    caps.push_back({"nvidia_device", "gpu", S::kMissing, "no /dev/nvidia0", {}});
  // Loaded and closed again at once: only whether the driver library is there matters.
  if (void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(lib);
    caps.push_back({"libcuda", "gpu", S::kOk, "libcuda.so.1 loads", {}});
  } else {
    const char* error = ::dlerror();
    caps.push_back({"libcuda", "gpu", S::kMissing, error ? error : "libcuda.so.1 does not load", {}});
  }
  // The toolkit and NCCL as files (nothing is loaded): what building the CUDA parts needs.
  const char* cuda_home = std::getenv("CUDA_HOME");
  const std::string cuda = cuda_home && *cuda_home ? cuda_home : "/usr/local/cuda";
  if (is_executable_file(cuda + "/bin/nvcc"))
    caps.push_back({"cuda_toolkit", "gpu", S::kOk, cuda + "/bin/nvcc", {}});
  else
    caps.push_back({"cuda_toolkit", "gpu", S::kMissing, fmt::format("no {}/bin/nvcc (set CUDA_HOME)", cuda), {}});
  std::string nccl;
  for (const auto& dir : {cuda + "/lib64", std::string("/usr/lib/x86_64-linux-gnu"), std::string("/usr/lib64")})
    if (nccl.empty() && path_exists(dir + "/libnccl.so.2")) nccl = dir + "/libnccl.so.2";
  if (!nccl.empty())
    caps.push_back({"nccl", "gpu", S::kOk, nccl, {}});
  else
    caps.push_back({"nccl", "gpu", S::kMissing, "no libnccl.so.2 in the toolkit or system library directories", {}});
  // The CUDA layer's module: built with this chaosbench, and loading here (with the CUDA
  // runtime and NCCL it links) or not.
  if (const auto layer = bench::train::cuda_layer_status(); !bench::train::cuda_built())
    caps.push_back({"cuda_parts", "gpu", S::kMissing, "not built (configure with a CUDA toolkit, CHAOSBENCH_CUDA)", {}});
  else if (layer.error.empty())
    caps.push_back({"cuda_parts", "gpu", S::kOk, layer.path + " loads", {}});
  else
    caps.push_back({"cuda_parts", "gpu", S::kMissing, layer.error, {}});
  // The interposer a command workload gets preloaded for GPU faults, next to this binary.
  const std::string exe = common::self_executable();
  const std::string interposer = common::library_beside(exe, "libchaosbench_cuda.so");
  if (!exe.empty() && path_exists(interposer))
    caps.push_back({"cuda_interposer", "gpu", S::kOk, interposer, {}});
  else
    caps.push_back({"cuda_interposer", "gpu", S::kMissing,
                    fmt::format("no {} (built with the CUDA headers, unless CHAOSBENCH_CUDA=OFF)", interposer), {}});
  return caps;
}

void append(std::vector<Capability>& to, std::vector<Capability> from) {
  for (auto& c : from) to.push_back(std::move(c));
}

}  // namespace

std::string_view to_string(CapabilityStatus status) {
  switch (status) {
    case S::kOk: return "ok";
    case S::kMissing: return "missing";
    case S::kUnknown: return "unknown";
  }
  return "unknown";
}

const Capability* HostReport::find(std::string_view name) const {
  for (const auto& c : capabilities)
    if (c.name == name) return &c;
  return nullptr;
}

HostReport probe_host() {
  const auto start = Clock::now();
  HostReport report;
  report.host = probe_identity();
  auto& caps = report.capabilities;
  append(caps, identity_capabilities(report.host));
  append(caps, namespace_capabilities(report.host));
  append(caps, kernel_capabilities(read_kernel_evidence(report.host.kernel_release)));
  append(caps, probe_cgroups(report.host.kernel_release));
  append(caps, tool_capabilities());
  append(caps, gpu_capabilities());
  caps.push_back({"gloo.tcp", "transport", S::kOk, "gloo TCP transport, linked in", {}});

  report.backends = derive_fault_backends(caps);
  auto cluster = derive_cluster(caps);
  report.cluster_mode = cluster.mode;
  report.cluster_detail = cluster.detail;
  explain_impacts(report);
  report.probe_duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  return report;
}

}  // namespace chaosbench::harness
