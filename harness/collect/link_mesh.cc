#include "harness/collect/link_mesh.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <chrono>
#include <random>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kernel/netns.h"

namespace chaosbench::harness {
namespace {

// A probe or its echo, 40 bytes, big-endian: magic, kind, source and destination node,
// the pair's sequence number, the sender's send time, how long the reflector held it
// (echo), and the run's token.
constexpr std::uint32_t kMagic = 0x43424d50;  // "CBMP"
constexpr std::size_t kPacketBytes = 40;
constexpr unsigned char kProbe = 1, kEcho = 2;
// A probe without its echo this long after it was sent is lost: 1 s, or 3 ticks when
// they are longer (a probe is echoed at the reflector's next tick and its echo read at
// the tick after).
constexpr std::int64_t kTimeoutNs = 1'000'000'000;
constexpr std::size_t kMaxNodes = 256;
constexpr std::size_t kMaxReadsPerWake = 64;
// With user stamps: how long after its start a mesh sends its first probes.
constexpr std::int64_t kUserSettleNs = 1'000'000'000;

void put(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * (bytes - 1 - i)));
}
std::uint64_t get(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
std::int64_t wall_ns() { return clock_ns(CLOCK_REALTIME); }
std::int64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }

sockaddr_in ipv4(std::uint32_t address, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = address;
  return a;
}

// The node's socket: made in its namespace (a socket belongs to the namespace it is made
// in, wherever it is used from), timestamps on, bound to the node's address.
common::UniqueFd node_socket(const MeshNode& node, std::uint32_t address, bool kernel_stamps, std::uint16_t* port) {
  common::UniqueFd fd;
  std::string err;
  auto make = [&] {
    fd = common::UniqueFd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return void(err = std::strerror(errno));
    int on = 1;
    auto a = ipv4(address, 0);
    socklen_t len = sizeof a;
    // Room for a tick's datagrams of a large cluster (root may pass rmem_max).
    int buffer = 1 << 20;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0)
      ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    if ((kernel_stamps && ::setsockopt(fd.get(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) ||
        ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
      err = std::strerror(errno);
    *port = ntohs(a.sin_port);
  };
  try {
    if (node.netns_fd >= 0) common::in_netns(node.netns_fd, make); else make();
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (!err.empty())
    throw std::runtime_error(fmt::format("link mesh: cannot bind a UDP socket on {} ({}): {}", node.name, node.address, err));
  return fd;
}

}  // namespace

struct LinkMesh::Packet {
  unsigned char kind = 0;
  std::uint16_t src = 0, dst = 0;
  std::uint32_t seq = 0;
  std::int64_t sent_ns = 0;
  std::int64_t held_ns = 0;
  std::uint64_t token = 0;

  void encode(unsigned char* b) const {
    std::memset(b, 0, kPacketBytes);
    put(b, kMagic, 4);
    b[4] = kind;
    put(b + 6, src, 2);
    put(b + 8, dst, 2);
    put(b + 12, seq, 4);
    put(b + 16, static_cast<std::uint64_t>(sent_ns), 8);
    put(b + 24, static_cast<std::uint64_t>(held_ns), 8);
    put(b + 32, token, 8);
  }
  bool decode(const unsigned char* b, std::size_t n) {
    if (n != kPacketBytes || get(b, 4) != kMagic) return false;
    kind = b[4];
    src = static_cast<std::uint16_t>(get(b + 6, 2));
    dst = static_cast<std::uint16_t>(get(b + 8, 2));
    seq = static_cast<std::uint32_t>(get(b + 12, 4));
    sent_ns = static_cast<std::int64_t>(get(b + 16, 8));
    held_ns = static_cast<std::int64_t>(get(b + 24, 8));
    token = get(b + 32, 8);
    return kind == kProbe || kind == kEcho;
  }
};

LinkMesh::LinkMesh(std::vector<MeshNode> nodes, const MeshSpec& spec, Sink sink, std::uint64_t token, MeshStamps stamps)
    : nodes_(std::move(nodes)), spec_(spec), sink_(std::move(sink)), token_(token), stamps_(stamps) {
  if (nodes_.size() < 2 || nodes_.size() > kMaxNodes)
    throw std::runtime_error(fmt::format("link mesh: {} nodes; it probes 2 to {}", nodes_.size(), kMaxNodes));
  window_ns_ = std::max<std::int64_t>(1'000'000, spec_.window.value.count());
  pairs_.resize(nodes_.size() * nodes_.size());
  if (token_ == 0) {
    std::random_device rd;
    token_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ static_cast<std::uint64_t>(wall_ns());
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const MeshNode& node = nodes_[i];
    in_addr a{};
    if (::inet_pton(AF_INET, node.address.c_str(), &a) != 1)
      throw std::runtime_error(fmt::format("link mesh: {}'s address \"{}\" is not IPv4", node.name, node.address));
    addresses_.push_back(a.s_addr);
    Socket s;
    s.port = node.port;
    if (node.local) {
      s.fd = node_socket(node, a.s_addr, stamps_ == MeshStamps::kKernel, &s.port);  // what was made before a throw closes with it
      local_.push_back(i);
    }
    sockets_.push_back(std::move(s));
  }
  if (local_.empty()) throw std::runtime_error("link mesh: no node of it is local");
  stop_fd_ = common::UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_fd_) throw std::runtime_error(fmt::format("link mesh: eventfd: {}", std::strerror(errno)));
}

void LinkMesh::set_peer_port(std::size_t node, std::uint16_t port) {
  if (node >= nodes_.size() || nodes_[node].local || thread_.joinable())
    throw std::logic_error("link mesh: a peer's port is set for a remote node, before start()");
  sockets_[node].port = port;
}

LinkMesh::~LinkMesh() { stop(); }

void LinkMesh::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void LinkMesh::stop() {
  if (!thread_.joinable()) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_fd_.get(), &one, sizeof one);
  thread_.join();
}

// Wakes only at ticks (`rate` a second): reads what arrived since (echoing probes, which
// say how long they waited, and taking echoes: the kernel stamped each on arrival, so
// reading late changes no round trip), closes the windows that ended, and sends every
// node's probe to every other node. So the mesh costs the machine `rate` wake-ups a
// second, not one per datagram: on an oversubscribed machine every wake-up of a thread
// outside the workload can pre-empt a rank. With user stamps (an agent's mesh, link_mesh.h)
// it also wakes for each datagram, which it stamps as it reads it.
void LinkMesh::loop() {
  const auto tick_ns = static_cast<std::int64_t>(1e9 / spec_.rate);
  timeout_ns_ = std::max(kTimeoutNs, 3 * tick_ns);
  // The stop eventfd first; with user stamps, every local socket too (a wake-up each).
  std::vector<pollfd> fds{{stop_fd_.get(), POLLIN, 0}};
  if (stamps_ == MeshStamps::kUser)
    for (std::size_t i : local_) fds.push_back({sockets_[i].fd.get(), POLLIN, 0});
  origin_mono_ns_ = mono_ns();
  origin_wall_ns_ = wall_ns();
  // With user stamps the first probes wait a second: every agent's mesh is reading by then
  // (the controller starts them within milliseconds), so no probe waits unread in a peer's
  // socket and counts that wait as round trip.
  std::int64_t next_tick = origin_mono_ns_ + (stamps_ == MeshStamps::kUser ? kUserSettleNs : 0);
  for (;;) {
    for (std::size_t k = 0; k < local_.size(); ++k) {
      const bool capped = drain(local_[k]);
      // A flood: that socket is not polled again before the next tick, so it costs a wake-up
      // or two a tick, not a spinning thread.
      if (fds.size() > 1 && capped) fds[k + 1].events = 0;
    }
    const std::int64_t now = mono_ns();
    const std::int64_t window = (now - origin_mono_ns_) / window_ns_;
    if (window > current_window_) close_windows(window);
    if (now >= next_tick) {
      for (std::size_t k = 1; k < fds.size(); ++k) fds[k].events = POLLIN;
      for (std::size_t src : local_) send_probes(src, window);
      next_tick += tick_ns;
      if (next_tick < now) next_tick = now + tick_ns;  // stalled: skip, never burst
    }
    const std::int64_t wake = std::min(next_tick, origin_mono_ns_ + (current_window_ + 1) * window_ns_);
    const auto wait_ms = std::max<std::int64_t>(0, (wake - mono_ns() + 999'999) / 1'000'000);
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) break;
  }
  // The last probes' echoes: reflected now, taken a moment later; what is still out then
  // is not counted either way.
  for (std::size_t i : local_) drain(i);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (std::size_t i : local_) drain(i);
  close_windows(current_window_ + 1);
  cpu_ns_ = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  wall_ran_ns_ = mono_ns() - origin_mono_ns_;
}

void LinkMesh::send_probes(std::size_t src, std::int64_t window) {
  unsigned char buf[kPacketBytes];
  for (std::size_t dst = 0; dst < nodes_.size(); ++dst) {
    if (dst == src || sockets_[dst].port == 0) continue;  // a peer without a mesh: nothing to measure
    Packet p{kProbe, static_cast<std::uint16_t>(src), static_cast<std::uint16_t>(dst), 0, wall_ns(), 0, token_};
    p.seq = pairs_[src * nodes_.size() + dst].sent(p.sent_ns, window);
    p.encode(buf);
    const auto to = ipv4(addresses_[dst], sockets_[dst].port);
    // A full socket buffer or an unreachable peer (a partition) is a lost probe.
    ::sendto(sockets_[src].fd.get(), buf, sizeof buf, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    ++sent_;
  }
}

bool LinkMesh::from_node(const sockaddr_in& from, std::size_t node) const {
  return from.sin_family == AF_INET && from.sin_addr.s_addr == addresses_[node] &&
         ntohs(from.sin_port) == sockets_[node].port;
}

bool LinkMesh::drain(std::size_t node) {
  unsigned char buf[kPacketBytes + 1];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  // A tick brings each socket 2 (N - 1) datagrams (probes to echo, echoes to take); more
  // than twice that is a flood, left for the next tick.
  const std::size_t most = 4 * nodes_.size() + kMaxReadsPerWake;
  for (std::size_t reads = 0; reads < most; ++reads) {
    sockaddr_in from{};
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(sockets_[node].fd.get(), &msg, 0);
    if (got < 0) return false;  // EAGAIN: drained (an ICMP error too: the probe is lost)
    std::int64_t rx_ns = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts{};
        std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
        rx_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
      }
    if (rx_ns == 0) rx_ns = wall_ns();  // user stamps (none asked for), or the kernel gave none
    Packet p;
    const bool ours = p.decode(buf, static_cast<std::size_t>(got)) && p.token == token_ && p.src < nodes_.size() &&
                      p.dst < nodes_.size() && p.src != p.dst;
    if (ours && p.kind == kProbe && p.dst == node && from_node(from, p.src)) on_probe(node, p, from, rx_ns);
    else if (ours && p.kind == kEcho && p.src == node && from_node(from, p.dst)) on_echo(node, p, from, rx_ns);
    else ++refused_;
  }
  return true;  // the cap: more may wait
}

// The reflector: the probe goes back to the node it came from, with how long it was held.
void LinkMesh::on_probe(std::size_t node, Packet p, const sockaddr_in& from, std::int64_t rx_ns) {
  unsigned char out[kPacketBytes];
  p.kind = kEcho;
  p.held_ns = wall_ns() - rx_ns;
  p.encode(out);
  ::sendto(sockets_[node].fd.get(), out, sizeof out, 0, reinterpret_cast<const sockaddr*>(&from), sizeof from);
}

void LinkMesh::on_echo(std::size_t node, const Packet& p, const sockaddr_in&, std::int64_t rx_ns) {
  if (pairs_[node * nodes_.size() + p.dst].answered(p.seq, rx_ns, p.held_ns)) ++received_;
  else ++refused_;
}

// Closes the windows before `window`: each pair's round trips of the one gathered, and
// the loss of every window whose probes have all had their timeout.
void LinkMesh::close_windows(std::int64_t window) {
  const double t = static_cast<double>(origin_wall_ns_ + window * window_ns_) / 1e9;
  const std::int64_t now = wall_ns();
  const std::size_t n = nodes_.size();
  for (std::size_t src : local_)
    for (std::size_t dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      auto& w = pairs_[src * n + dst];
      if (auto rtt = w.take_rtt_ms()) emit("net/pair_rtt", src, dst, *rtt, "ms", t);
      for (const auto& loss : w.settle(now, timeout_ns_)) {
        if (loss.sent == 0) continue;
        // Stamped at the end of the window the probes were sent in: when the loss was.
        const double at = static_cast<double>(origin_wall_ns_ + (loss.window + 1) * window_ns_) / 1e9;
        emit("net/pair_loss", src, dst, 100.0 * loss.lost / loss.sent, "%", at);
      }
    }
  current_window_ = window;
}

void LinkMesh::emit(const char* name, std::size_t src, std::size_t dst, double value, const char* unit, double t) {
  sink_(bench::Sample{-1, t, std::string(name), value, std::string(unit),
                      bench::Labels{{"src", nodes_[src].name}, {"dst", nodes_[dst].name}}});
}

}  // namespace chaosbench::harness
