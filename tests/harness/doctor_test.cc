// `chaosbench doctor`: the host probe on this machine, the pure parsers and backend rules
// with made-up evidence, and the built binary's --json shape and exit codes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <sys/wait.h>

#include "faults/registry/registry.h"
#include "harness/doctor/cgroup_probe.h"
#include "harness/doctor/fault_backends.h"
#include "harness/doctor/host_identity.h"
#include "harness/doctor/host_probe.h"
#include "harness/doctor/kernel_features.h"

namespace doctor_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using S = CapabilityStatus;

namespace {

struct Ran {
  int exit_code = -1;
  std::string out;
};

// Runs the built chaosbench with `args` and captures its stdout.
Ran run_chaosbench(const std::string& args) {
  Ran ran;
  std::string command = std::string("'") + CHAOSBENCH_BINARY + "' " + args + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) ran.out.append(buffer, n);
  int status = ::pclose(pipe);
  if (WIFEXITED(status)) ran.exit_code = WEXITSTATUS(status);
  return ran;
}

const FaultBackend* backend_for(const std::vector<FaultBackend>& backends, const std::string& fault) {
  for (const auto& b : backends)
    if (b.fault == fault) return &b;
  return nullptr;
}

Capability cap(std::string name, S status) { return {std::move(name), "test", status, "made up", {}}; }

// A root host with every capability the backend rules look at, all ok.
std::vector<Capability> full_host() {
  std::vector<Capability> caps;
  for (auto name : {"cap_net_admin", "cap_sys_admin", "netns", "netns.unshare", "ip", "tc", "iptables", "sch_netem",
                    "sch_htb", "sch_tbf", "cls_u32", "nfnetlink_queue", "xt_NFQUEUE", "veth", "bridge", "cgroup.freezer",
                    "cgroup.cpu", "cgroup.memory", "cuda_parts", "cuda_interposer", "nvidia_device", "libcuda"})
    caps.push_back(cap(name, S::kOk));
  return caps;
}

void set_status(std::vector<Capability>& caps, const std::string& name, S status) {
  for (auto& c : caps)
    if (c.name == name) c.status = status;
}

}  // namespace

TEST_CASE("doctor: probe_host is fast and describes this host", "[doctor]") {
  auto start = std::chrono::steady_clock::now();
  auto report = probe_host();
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed < std::chrono::seconds(2));
  CHECK_FALSE(report.host.kernel_release.empty());
  CHECK(report.host.cpu_count > 0);
  CHECK(report.host.memory_total_bytes > 0);

  std::set<std::string> names;
  for (const auto& c : report.capabilities) {
    INFO(c.name);
    CHECK(names.insert(c.name).second);
    CHECK_FALSE(c.group.empty());
    CHECK_FALSE(c.detail.empty());
    CHECK(c.detail.find('\n') == std::string::npos);
    if (c.status == S::kOk) CHECK(c.impact.empty());
  }
  for (auto required : {"kernel", "netns", "sch_netem", "nfnetlink_queue", "cgroup.freezer", "iptables", "libcuda",
                        "cuda_parts", "gloo.tcp"})
    CHECK(report.find(required) != nullptr);

  const auto* marker = backend_for(report.backends, "marker");
  REQUIRE(marker != nullptr);
  REQUIRE_FALSE(marker->usable.empty());
  CHECK(marker->usable.front() == "none");
  CHECK(backend_for(report.backends, "node.kill")->usable.front() == "signal");
  CHECK((report.cluster_mode == "network namespaces" || report.cluster_mode == "local processes"));

  // This machine's kernel has no sch_netem; whatever a host lacks is never chosen.
  const auto* netem = report.find("sch_netem");
  if (netem->status != S::kOk) {
    const auto* delay = backend_for(report.backends, "network.delay");
    CHECK((delay->usable.empty() || delay->usable.front() != "netem"));
    CHECK_FALSE(netem->impact.empty());
  }
}

TEST_CASE("doctor: kernel config and module file names parse", "[doctor]") {
  auto config = parse_kernel_config("CONFIG_NET_SCH_HTB=y\n# CONFIG_NET_SCH_NETEM is not set\nCONFIG_VETH=m\n"
                                    "CONFIG_HZ=250\nCONFIG_CMDLINE=\"x\"\n");
  CHECK(config.at("CONFIG_NET_SCH_HTB") == "y");
  CHECK(config.at("CONFIG_VETH") == "m");
  CHECK(config.count("CONFIG_NET_SCH_NETEM") == 0);
  CHECK(config.count("CONFIG_HZ") == 0);

  CHECK(module_name_from_path("kernel/net/sched/sch_netem.ko") == "sch_netem");
  CHECK(module_name_from_path("kernel/net/sched/sch_netem.ko.xz") == "sch_netem");
  CHECK(module_name_from_path("kernel/net/netfilter/xt_NFQUEUE.ko.zst") == "xt_NFQUEUE");
  CHECK(module_name_from_path("kernel/drivers/net/some-driver.ko.gz") == "some_driver");
  CHECK(module_name_from_path("kernel/net/sched/modules.order").empty());
  CHECK(module_name_from_path("kernel/net/sched/sch_netem.kobj").empty());
}

TEST_CASE("doctor: a kernel module is judged from the best evidence there is", "[doctor]") {
  const KernelModuleSpec netem{"sch_netem", "CONFIG_NET_SCH_NETEM"};
  KernelEvidence ev;
  ev.lib_modules_dir = "/lib/modules/test";

  SECTION("nothing to tell by is unknown, and says so") {
    auto c = assess_kernel_module(netem, ev);
    CHECK(c.status == S::kUnknown);
    CHECK_THAT(c.detail, Catch::Contains("/lib/modules/test"));
  }
  SECTION("loaded wins over a config that says not set") {
    ev.loaded = std::set<std::string>{"sch_netem"};
    ev.config = std::map<std::string, std::string>{};
    CHECK(assess_kernel_module(netem, ev).status == S::kOk);
  }
  SECTION("the config decides built-ins and absences") {
    ev.config_source = "/proc/config.gz";
    ev.config = std::map<std::string, std::string>{{"CONFIG_NET_SCH_NETEM", "y"}};
    CHECK(assess_kernel_module(netem, ev).status == S::kOk);
    ev.config = std::map<std::string, std::string>{};
    auto c = assess_kernel_module(netem, ev);
    CHECK(c.status == S::kMissing);
    CHECK_THAT(c.detail, Catch::Contains("CONFIG_NET_SCH_NETEM is not set"));
  }
  SECTION("=m needs a module file, which an absent /lib/modules cannot show") {
    ev.config = std::map<std::string, std::string>{{"CONFIG_NET_SCH_NETEM", "m"}};
    CHECK(assess_kernel_module(netem, ev).status == S::kUnknown);
    ev.lib_modules_present = true;
    CHECK(assess_kernel_module(netem, ev).status == S::kMissing);
    ev.module_files["sch_netem"] = "kernel/net/sched/sch_netem.ko.xz";
    CHECK(assess_kernel_module(netem, ev).status == S::kOk);
  }
  SECTION("without a config, /lib/modules decides") {
    ev.lib_modules_present = true;
    CHECK(assess_kernel_module(netem, ev).status == S::kMissing);
    ev.builtin.insert("sch_netem");
    CHECK(assess_kernel_module(netem, ev).status == S::kOk);
  }
  SECTION("a runtime registration proves a feature") {
    ev.proofs["sch_netem"] = "registered somewhere";
    auto c = assess_kernel_module(netem, ev);
    CHECK(c.status == S::kOk);
    CHECK(c.detail == "registered somewhere");
  }
}

TEST_CASE("doctor: cgroup controllers on v1, v2 and hybrid hosts", "[doctor]") {
  const std::string hybrid =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "37 31 0:34 / /sys/fs/cgroup/free\\040zer rw,relatime - cgroup cgroup rw,freezer\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
  auto mounts = parse_mountinfo(hybrid);
  REQUIRE(mounts.size() == 5);
  CHECK(mounts[1].super_options == "rw,cpu,cpuacct");
  CHECK(mounts[3].mount_point == "/sys/fs/cgroup/free zer");

  auto status_of = [](const std::vector<Capability>& caps, const std::string& name) {
    for (const auto& c : caps)
      if (c.name == name) return c.status;
    FAIL("no capability " << name);
    return S::kUnknown;
  };

  CgroupInputs in;
  in.mounts = mounts;
  in.proc_cgroups = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nmemory\t4\t1\t1\n"
                    "freezer\t6\t1\t1\npids\t0\t1\t0\n";
  auto caps = assess_cgroups(in);
  CHECK(status_of(caps, "cgroup.mode") == S::kOk);
  CHECK(status_of(caps, "cgroup.cpu") == S::kOk);
  CHECK(status_of(caps, "cgroup.memory") == S::kOk);
  CHECK(status_of(caps, "cgroup.freezer") == S::kOk);
  CHECK(status_of(caps, "cgroup.pids") == S::kMissing);  // disabled in /proc/cgroups

  in.writable = [](const std::string& path) { return path != "/sys/fs/cgroup/memory"; };
  CHECK(status_of(assess_cgroups(in), "cgroup.memory") == S::kMissing);

  CgroupInputs v2;
  v2.mounts = parse_mountinfo("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
  v2.v2_controllers = "cpuset cpu io memory pids";
  v2.v2_core_freezer = true;
  auto v2_caps = assess_cgroups(v2);
  CHECK(status_of(v2_caps, "cgroup.cpu") == S::kOk);
  CHECK(status_of(v2_caps, "cgroup.pids") == S::kOk);
  CHECK(status_of(v2_caps, "cgroup.freezer") == S::kOk);
  v2.v2_core_freezer = false;
  CHECK(status_of(assess_cgroups(v2), "cgroup.freezer") == S::kMissing);

  CHECK(status_of(assess_cgroups(CgroupInputs{}), "cgroup.mode") == S::kMissing);
}

TEST_CASE("doctor: the cgroup version node cgroups use, and the v2 controllers there", "[doctor]") {
  auto find = [](const std::vector<Capability>& caps, const std::string& name) {
    for (const auto& c : caps)
      if (c.name == name) return c;
    FAIL("no capability " << name);
    return Capability{};
  };
  CgroupInputs hybrid;
  hybrid.mounts = parse_mountinfo(
      "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
      "37 31 0:34 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  hybrid.v2_own_dir = "/sys/fs/cgroup/unified";
  hybrid.v2_controllers = "hugetlb\n";
  hybrid.v2_own_is_root = true;
  hybrid.v2_core_freezer = true;
  auto caps = assess_cgroups(hybrid);
  CHECK(find(caps, "cgroup.mode").detail ==
        "hybrid: v1 hierarchies, cgroup2 at /sys/fs/cgroup/unified (v2 controllers for /sys/fs/cgroup/unified: "
        "hugetlb); node cgroups use v1");
  CHECK(find(caps, "cgroup.cpu").detail == "v1 at /sys/fs/cgroup/cpu");
  // v1 is used, so a controller only v2 could give is missing, as NodeCgroups would find.
  CHECK(find(caps, "cgroup.memory").status == S::kMissing);

  hybrid.forced_version = "2";  // CHAOSBENCH_CGROUP_VERSION=2
  caps = assess_cgroups(hybrid);
  CHECK_THAT(find(caps, "cgroup.mode").detail, Catch::EndsWith("node cgroups use v2"));
  CHECK(find(caps, "cgroup.freezer").status == S::kOk);
  CHECK(find(caps, "cgroup.pids").status == S::kOk);
  CHECK(find(caps, "cgroup.cpu").status == S::kMissing);
  CHECK_THAT(find(caps, "cgroup.cpu").detail, Catch::Contains("cgroup.controllers: \"hugetlb\""));

  CgroupInputs unified;
  unified.mounts = parse_mountinfo("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
  unified.v2_own_dir = "/sys/fs/cgroup/user.slice/session-1.scope";
  unified.v2_controllers = "cpu memory pids\n";
  unified.v2_core_freezer = true;
  unified.v2_others_in_own = true;  // the login shell shares it
  caps = assess_cgroups(unified);
  CHECK(find(caps, "cgroup.mode").detail ==
        "unified v2 at /sys/fs/cgroup (v2 controllers for /sys/fs/cgroup/user.slice/session-1.scope: cpu memory pids); "
        "node cgroups use v2");
  CHECK(find(caps, "cgroup.memory").status == S::kMissing);
  CHECK_THAT(find(caps, "cgroup.memory").detail, Catch::Contains("holds other processes"));
  unified.v2_others_in_own = false;  // systemd-run --scope -p Delegate=yes
  caps = assess_cgroups(unified);
  CHECK(find(caps, "cgroup.memory").status == S::kOk);
  CHECK_THAT(find(caps, "cgroup.memory").detail, Catch::Contains("moves itself into a leaf"));

  CgroupInputs v1_only;
  v1_only.mounts = parse_mountinfo("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
  CHECK(find(assess_cgroups(v1_only), "cgroup.mode").detail == "v1 hierarchies only; node cgroups use v1");
}

TEST_CASE("doctor: identity parsers", "[doctor]") {
  CHECK(parse_cap_eff("Name:\tx\nCapEff:\t000001fffeffffff\n") == 0x000001fffeffffffull);
  CHECK(parse_cap_eff("CapEff:\t0000000000000000\n") == 0u);
  CHECK_FALSE(parse_cap_eff("CapPrm:\t1\n"));
  CHECK(parse_mem_total("MemTotal:       24683652 kB\nMemFree: 1 kB\n") == 24683652ull * 1024);
  CHECK_FALSE(parse_mem_total("MemFree: 1 kB\n"));
  CHECK(parse_pretty_name("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n") ==
        std::string("Debian GNU/Linux 12 (bookworm)"));
  CHECK_FALSE(parse_pretty_name("NAME=x\n"));
}

TEST_CASE("doctor: fault backends follow the host's capabilities", "[doctor]") {
  auto caps = full_host();
  auto backends = derive_fault_backends(caps);
  CHECK(backend_for(backends, "network.delay")->usable == std::vector<std::string>{"netem", "nfqueue"});
  CHECK(backend_for(backends, "network.rate")->usable.front() == "htb");
  CHECK(backend_for(backends, "node.pause")->usable.front() == "freezer cgroup");
  CHECK(backend_for(backends, "gpu.*, collective.*")->usable ==
        std::vector<std::string>{"control block (train, serve)", "cuda interposer (command)"});
  CHECK(derive_cluster(caps).mode == "network namespaces");

  SECTION("no netem: nfqueue, and sch_netem says why it matters") {
    set_status(caps, "sch_netem", S::kMissing);
    HostReport report;
    report.capabilities = caps;
    report.backends = derive_fault_backends(caps);
    report.cluster_mode = derive_cluster(caps).mode;
    explain_impacts(report);
    for (auto fault : {"network.delay", "network.loss", "network.corrupt", "network.reorder"})
      CHECK(backend_for(report.backends, fault)->usable == std::vector<std::string>{"nfqueue"});
    // The delay line cannot duplicate packets: without netem, nothing can.
    CHECK(backend_for(report.backends, "network.duplicate")->usable.empty());
    CHECK_THAT(backend_for(report.backends, "network.delay")->detail, Catch::Contains("sch_netem missing"));
    CHECK(report.find("sch_netem")->impact ==
          "network.delay/loss/corrupt/reorder will use the nfqueue backend; network.duplicate cannot be injected");
  }
  SECTION("no netem and no iptables: cannot be injected") {
    set_status(caps, "sch_netem", S::kMissing);
    set_status(caps, "iptables", S::kMissing);
    backends = derive_fault_backends(caps);
    CHECK(backend_for(backends, "network.delay")->usable.empty());
    CHECK(backend_for(backends, "network.partition")->usable.empty());
    CHECK(backend_for(backends, "marker")->usable.front() == "none");
  }
  SECTION("no CAP_NET_ADMIN: no network faults and no namespaced cluster") {
    set_status(caps, "cap_net_admin", S::kMissing);
    backends = derive_fault_backends(caps);
    CHECK(backend_for(backends, "network.delay")->usable.empty());
    CHECK(backend_for(backends, "network.rate")->usable.empty());
    CHECK(derive_cluster(caps).mode == "local processes");
  }
  SECTION("no freezer, no GPU: signals and emulation") {
    set_status(caps, "cgroup.freezer", S::kMissing);
    set_status(caps, "nvidia_device", S::kMissing);
    backends = derive_fault_backends(caps);
    CHECK(backend_for(backends, "node.pause")->usable == std::vector<std::string>{"signal"});
    CHECK(backend_for(backends, "gpu.*, collective.*")->usable ==
          std::vector<std::string>{"control block (train, serve)"});
    CHECK_THAT(backend_for(backends, "gpu.*, collective.*")->detail, Catch::Contains("nvidia_device missing"));
  }
  SECTION("veth unknown is accepted and said; veth missing is not") {
    set_status(caps, "veth", S::kUnknown);
    auto cluster = derive_cluster(caps);
    CHECK(cluster.mode == "network namespaces");
    CHECK_THAT(cluster.detail, Catch::Contains("veth not verified"));
    set_status(caps, "veth", S::kMissing);
    CHECK(derive_cluster(caps).mode == "local processes");
  }
}

TEST_CASE("doctor: the backend list comes from the registry, every fault type once", "[doctor]") {
  const auto backends = derive_fault_backends(full_host());
  std::vector<std::string> listed;
  for (const auto& b : backends) listed.push_back(b.fault);
  // The order doctor has always printed (text and --json): pinned by the registry's
  // backend_choices().
  CHECK(listed == std::vector<std::string>{"marker", "network.delay", "network.loss", "network.corrupt",
                                           "network.reorder", "network.duplicate", "network.rate",
                                           "network.partition", "node.kill", "rank.kill", "process.signal",
                                           "node.pause", "node.cpu_throttle", "node.memory_limit",
                                           "gpu.*, collective.*"});
  for (const auto& info : chaosbench::faults::fault_registry()) {
    INFO(info.type);
    REQUIRE(info.backends != nullptr);
    const std::string name(info.backends->family.empty() ? info.type : info.backends->family);
    CHECK(std::count(listed.begin(), listed.end(), name) == 1);
  }
}

TEST_CASE("doctor: chaosbench doctor --json prints one object and exits 0", "[doctor]") {
  auto ran = run_chaosbench("doctor --json");
  CHECK(ran.exit_code == 0);
  auto json = nlohmann::json::parse(ran.out);
  REQUIRE(json.is_object());
  CHECK(json.at("host").at("kernel_release").is_string());
  CHECK(json.at("host").at("cpus").get<int>() > 0);
  CHECK(json.at("host").at("root").is_boolean());
  REQUIRE(json.at("capabilities").is_array());
  REQUIRE_FALSE(json.at("capabilities").empty());
  std::set<std::string> names;
  for (const auto& c : json.at("capabilities")) {
    for (auto key : {"name", "group", "status", "detail"}) CHECK(c.at(key).is_string());
    auto status = c.at("status").get<std::string>();
    CHECK((status == "ok" || status == "missing" || status == "unknown"));
    CHECK(names.insert(c.at("name").get<std::string>()).second);
  }
  const auto& backends = json.at("backends");
  REQUIRE(backends.is_object());
  CHECK(backends.at("marker") == "none");
  for (auto fault : {"network.delay", "network.rate", "network.partition", "node.kill", "node.pause",
                     "node.cpu_throttle", "node.memory_limit", "gpu.*, collective.*"}) {
    INFO(fault);
    CHECK((backends.at(fault).is_string() || backends.at(fault).is_null()));
  }
  auto cluster = json.at("cluster").get<std::string>();
  CHECK((cluster == "network namespaces" || cluster == "local processes"));
}

TEST_CASE("doctor: text output and usage errors", "[doctor]") {
  auto text = run_chaosbench("doctor");
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("fault backends"));
  CHECK_THAT(text.out, Catch::Contains("cluster: "));
  CHECK(run_chaosbench("doctor --bogus").exit_code == 2);
  CHECK(run_chaosbench("doctor extra").exit_code == 2);
  CHECK(run_chaosbench("doctor --help").exit_code == 0);
}

}  // namespace doctor_test
