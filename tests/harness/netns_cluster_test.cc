// The virtual cluster on real namespaces, veth and a bridge: addresses reach each other
// across the bridge, and nothing remains once the cluster is gone. Needs root.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <filesystem>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "harness/cluster/netns_cluster.h"
#include "test_util.h"

namespace netns_cluster_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::harness::NetnsCluster;
using chaosbench::test::skip_without_root;
namespace fs = std::filesystem;

namespace {

// A TCP connection from node `from` to node `to` (listening on its address).
bool can_connect(const NetnsCluster& c, int from, int to) {
  int listener = -1, client = -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(40000);
  ::inet_pton(AF_INET, c.address(to).c_str(), &addr.sin_addr);
  NetnsCluster::in_netns(c.node_netns_fd(to), [&] {
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(listener, 1) != 0) {
      ::close(listener);
      listener = -1;
    }
  });
  if (listener < 0) return false;
  NetnsCluster::in_netns(c.node_netns_fd(from), [&] { client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); });
  bool ok = ::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(client);
  ::close(listener);
  return ok;
}

std::string netns_id(int fd) {
  struct stat st {};
  ::fstat(fd, &st);
  return "net:[" + std::to_string(st.st_ino) + "]";
}

bool netns_exists(const std::string& id) {
  std::error_code ec;
  for (const auto& p : fs::directory_iterator("/proc", ec)) {
    std::error_code e2;
    auto target = fs::read_symlink(p.path() / "ns/net", e2);
    if (!e2 && target.string() == id) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("netns cluster: 4 nodes reach each other across the bridge, nothing remains after", "[netns]") {
  if (skip_without_root("network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)")) return;
  std::vector<std::string> ids;
  {
    NetnsCluster cluster(4, "test-run");
    for (int n = 0; n < 4; ++n) ids.push_back(netns_id(cluster.node_netns_fd(n)));
    ids.push_back(netns_id(cluster.bridge_netns_fd()));
    CHECK(cluster.address(0) != cluster.address(1));
    CHECK(can_connect(cluster, 0, 3));
    CHECK(can_connect(cluster, 2, 1));
    // Nothing was added to the host's namespace: the bridge and the veth ends live in the
    // cluster's own bridge namespace.
    CHECK_FALSE(fs::exists("/sys/class/net/br0"));
    CHECK_FALSE(fs::exists("/sys/class/net/n0"));
  }
  for (const auto& id : ids) CHECK_FALSE(netns_exists(id));
}

TEST_CASE("netns cluster: 64 nodes come up and go", "[netns]") {
  if (skip_without_root("network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)")) return;
  NetnsCluster cluster(64, "test-run-64");
  CHECK(cluster.nodes() == 64);
  CHECK(can_connect(cluster, 63, 0));
}

}  // namespace netns_cluster_test
