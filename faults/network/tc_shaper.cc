// The libnl side of the shaper: tc_plan.h decides the values, this file sends them.
// Every request is a plain rtnetlink message with NLM_F_ACK; the extended ACK text the
// kernel attaches to a refusal ("Exclusivity flag on, cannot modify") goes into the error.
#include "faults/network/tc_shaper.h"

#include <cstring>
#include <fmt/format.h>
#include <functional>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <map>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/tc.h>
#include <new>
#include <optional>
#include <stdexcept>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <utility>

#include "common/kernel/netns.h"
#include "common/kernel/route_socket.h"
#include "faults/network/tc_plan.h"
#include "faults/network/tc_requests.h"

namespace chaosbench::faults {
namespace {

constexpr std::uint32_t kRootHandle = TC_HANDLE(kShaperRootMajor, 0);
constexpr std::uint32_t class_handle(int id) { return TC_HANDLE(kShaperRootMajor, static_cast<std::uint32_t>(id)); }

struct NlPut {
  void operator()(rtnl_qdisc* p) const { rtnl_qdisc_put(p); }
  void operator()(rtnl_class* p) const { rtnl_class_put(p); }
  void operator()(rtnl_cls* p) const { rtnl_cls_put(p); }
  void operator()(rtnl_link* p) const { rtnl_link_put(p); }
  void operator()(nl_cache* p) const { nl_cache_free(p); }
  void operator()(nl_msg* p) const { nlmsg_free(p); }
};
template <class T>
using NlPtr = std::unique_ptr<T, NlPut>;
template <class T>
NlPtr<T> owned(T* p) {
  if (!p) throw std::bad_alloc();
  return NlPtr<T>(p);
}

void check_alloc(int rc, const char* what) {
  if (rc < 0) throw std::runtime_error(fmt::format("libnl: {}: {}", what, nl_geterror(rc)));
}

void place(rtnl_tc* tc, int ifindex, std::uint32_t parent, std::uint32_t handle) {
  rtnl_tc_set_ifindex(tc, ifindex);
  rtnl_tc_set_parent(tc, parent);
  if (handle) rtnl_tc_set_handle(tc, handle);
}

std::string handle_text(std::uint32_t handle) {
  return TC_H_MIN(handle) ? fmt::format("{:x}:{:x}", TC_H_MAJ(handle) >> 16, TC_H_MIN(handle))
                          : fmt::format("{:x}:", TC_H_MAJ(handle) >> 16);
}

// tc qdisc add dev DEV root handle 1: htb   (no default class: unclassified packets take
// htb's direct queue, unshaped). NLM_F_CREATE|NLM_F_EXCL without NLM_F_REPLACE is the
// ownership check, done by the kernel atomically: it grafts over a root whose handle is 0
// -- the one it attached itself (noqueue, pfifo_fast, fq_codel, mq; sch_api.c
// tc_modify_qdisc: "It may be default qdisc, ignore it") -- and answers EEXIST for any
// root someone added, since every added qdisc gets a nonzero handle.
NlPtr<rtnl_qdisc> root_request(int ifindex) {
  auto q = owned(rtnl_qdisc_alloc());
  place(TC_CAST(q.get()), ifindex, TC_H_ROOT, kRootHandle);
  check_alloc(rtnl_tc_set_kind(TC_CAST(q.get()), "htb"), "htb qdisc");
  return q;
}

// tc class add dev DEV parent 1: classid 1:N htb rate R ceil R burst B cburst B quantum Q
NlPtr<rtnl_class> class_request(int ifindex, const RulePlan& plan) {
  auto c = owned(rtnl_class_alloc());
  place(TC_CAST(c.get()), ifindex, kRootHandle, class_handle(plan.id));
  check_alloc(rtnl_tc_set_kind(TC_CAST(c.get()), "htb"), "htb class");
  // 64-bit setters: libnl adds TCA_HTB_RATE64/CEIL64 above 4 GB/s ("unlimited").
  check_alloc(rtnl_htb_set_rate64(c.get(), plan.rate_bytes_per_s), "htb rate");
  check_alloc(rtnl_htb_set_ceil64(c.get(), plan.rate_bytes_per_s), "htb ceil");
  check_alloc(rtnl_htb_set_rbuffer(c.get(), plan.burst_bytes), "htb burst");
  check_alloc(rtnl_htb_set_cbuffer(c.get(), plan.burst_bytes), "htb cburst");
  check_alloc(rtnl_htb_set_quantum(c.get(), plan.quantum_bytes), "htb quantum");
  return c;
}

// netem's "normal" table ships with iproute2, under a libdir libnl does not search on
// multiarch systems (Debian: /usr/lib/x86_64-linux-gnu/tc), so it gets a full path.
std::string normal_distribution_file() {
  static const std::string path = [] {
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/aarch64-linux-gnu/tc", "/usr/lib/tc",
                            "/usr/lib64/tc", "/usr/local/lib/tc", "/usr/share/tc"}) {
      std::string file = std::string(dir) + "/normal.dist";
      if (::access(file.c_str(), R_OK) == 0) return file;
    }
    return std::string();
  }();
  if (path.empty()) throw std::runtime_error("netem's normal distribution table (normal.dist, from iproute2) is not installed");
  return path;
}

// tc qdisc add dev DEV parent 1:N handle N: netem limit L delay D J C loss P ... The
// probabilities are already the kernel's raw 32-bit values; libnl passes them through
// (its `int` parameters carry the same 32 bits).
NlPtr<rtnl_qdisc> netem_request(int ifindex, std::uint32_t parent, std::uint32_t handle, const NetemPlan& n) {
  auto q = owned(rtnl_qdisc_alloc());
  place(TC_CAST(q.get()), ifindex, parent, handle);
  check_alloc(rtnl_tc_set_kind(TC_CAST(q.get()), "netem"), "netem qdisc");
  rtnl_qdisc* p = q.get();
  auto raw = [](std::uint32_t v) { return static_cast<int>(v); };
  rtnl_netem_set_limit(p, raw(n.limit));
  if (n.delay_us) rtnl_netem_set_delay(p, raw(n.delay_us));
  if (n.jitter_us) rtnl_netem_set_jitter(p, raw(n.jitter_us));
  if (n.delay_correlation) rtnl_netem_set_delay_correlation(p, raw(n.delay_correlation));
  if (n.normal_distribution) {
    int rc = rtnl_netem_set_delay_distribution(p, normal_distribution_file().c_str());
    if (rc < 0) throw std::runtime_error(fmt::format("cannot load netem's normal distribution: {}", nl_geterror(rc)));
  }
  if (n.loss) rtnl_netem_set_loss(p, raw(n.loss));
  if (n.loss_correlation) rtnl_netem_set_loss_correlation(p, raw(n.loss_correlation));
  if (n.duplicate) rtnl_netem_set_duplicate(p, raw(n.duplicate));
  if (n.corrupt) rtnl_netem_set_corruption_probability(p, raw(n.corrupt));
  if (n.reorder) rtnl_netem_set_reorder_probability(p, raw(n.reorder));
  if (n.reorder_correlation) rtnl_netem_set_reorder_correlation(p, raw(n.reorder_correlation));
  return q;
}

// libnl 3.7's netem message builder (netem_msg_fill_raw) stretches TCA_OPTIONS over the
// attributes after struct tc_netem_qopt, as sch_netem wants, and then adds their length
// to nlmsg_len a second time: the message claims as many bytes again past its end --
// zeros the kernel logs as "bytes leftover", or, with a distribution table (8 KiB, in a
// buffer libnl grew to just fit), memory past the buffer. TCA_OPTIONS is the last
// attribute and its length is right, so the message ends where it ends.
NlPtr<nl_msg> netem_add_message(rtnl_qdisc* q) {
  nl_msg* raw = nullptr;
  check_alloc(rtnl_qdisc_build_add_request(q, NLM_F_CREATE | NLM_F_EXCL, &raw), "build the netem request");
  auto msg = owned(raw);
  nlmsghdr* hdr = nlmsg_hdr(msg.get());
  auto* attr = static_cast<nlattr*>(nlmsg_attrdata(hdr, sizeof(tcmsg)));
  int rem = nlmsg_attrlen(hdr, sizeof(tcmsg));
  for (; nla_ok(attr, rem); attr = nla_next(attr, &rem)) {
    if (nla_type(attr) != TCA_OPTIONS) continue;
    const auto end = reinterpret_cast<char*>(attr) + NLA_ALIGN(attr->nla_len) - reinterpret_cast<char*>(hdr);
    if (end < static_cast<long>(hdr->nlmsg_len)) hdr->nlmsg_len = static_cast<std::uint32_t>(end);
    break;
  }
  return msg;
}

NlPtr<nl_msg> netem_add_message(int ifindex, const RulePlan& plan) {
  auto q = netem_request(ifindex, class_handle(plan.id), TC_HANDLE(static_cast<std::uint32_t>(plan.id), 0), *plan.netem);
  return netem_add_message(q.get());
}

// nl_send_sync frees the message.
int send_sync(nl_sock* sk, nl_msg* msg) { return nl_send_sync(sk, msg); }

// tc filter add dev DEV parent 1: protocol ip prio P u32 match ip dst A/32 flowid 1:N
NlPtr<rtnl_cls> filter_request(int ifindex, const RulePlan& plan) {
  auto f = owned(rtnl_cls_alloc());
  place(TC_CAST(f.get()), ifindex, kRootHandle, 0);  // handle 0: u32 numbers the node itself
  check_alloc(rtnl_tc_set_kind(TC_CAST(f.get()), "u32"), "u32 filter");
  rtnl_cls_set_prio(f.get(), plan.prio);
  rtnl_cls_set_protocol(f.get(), ETH_P_IP);
  for (const auto& key : plan.keys)
    check_alloc(rtnl_u32_add_key_uint32(f.get(), key.value, key.mask, key.offset, 0), "u32 key");
  // Terminal: a matching node returns its class. Without the flag u32 goes on to the next
  // node and the packet ends up unclassified (tc sets it whenever a flowid is given).
  check_alloc(rtnl_u32_set_cls_terminal(f.get()), "u32 terminal flag");
  check_alloc(rtnl_u32_set_classid(f.get(), class_handle(plan.id)), "u32 classid");
  return f;
}

bool gone(int rc) { return rc >= 0 || rc == -NLE_OBJ_NOTFOUND || rc == -NLE_NODEV; }

struct NetemProbe {
  bool available = false;
  std::string why;
};

// Tries a netem qdisc on lo in a throwaway namespace, which the kernel frees (with the
// probe qdisc) once its fd and the socket are closed.
NetemProbe probe_netem() {
  NetemProbe probe;
  int ns = -1;
  try {
    ns = common::new_netns();
  } catch (const std::system_error& e) {
    probe.why = fmt::format("cannot make a throwaway network namespace to try netem in: {} (needs CAP_SYS_ADMIN)",
                            e.code().message());
    return probe;
  }
  try {
    common::RouteSocket sock(ns);
    const int lo = 1;  // the loopback device is ifindex 1 in every namespace
    NetemPlan plan;
    plan.delay_us = 1000;
    plan.limit = 1000;
    auto q = netem_request(lo, TC_H_ROOT, TC_HANDLE(1, 0), plan);
    int rc = sock.call([&](nl_sock* sk) { return send_sync(sk, netem_add_message(q.get()).release()); });
    if (rc == -NLE_OBJ_NOTFOUND) {
      probe.why = "the kernel has no sch_netem (netem qdisc): " + sock.describe(rc);
    } else if (rc < 0) {
      probe.why = "adding a netem qdisc failed: " + sock.describe(rc);
    } else {
      probe.available = true;
    }
  } catch (const std::exception& e) {
    probe.why = std::string("netem probe: ") + e.what();
  }
  ::close(ns);
  return probe;
}

}  // namespace

std::vector<std::uint8_t> tc_add_request_bytes(const RulePlan& plan, int ifindex, TcRequest which) {
  nl_msg* msg = nullptr;
  int rc = 0;
  const int flags = NLM_F_CREATE | NLM_F_EXCL;
  switch (which) {
    case TcRequest::kRoot:
      rc = rtnl_qdisc_build_add_request(root_request(ifindex).get(), flags, &msg);
      break;
    case TcRequest::kClass:
      rc = rtnl_class_build_add_request(class_request(ifindex, plan).get(), flags, &msg);
      break;
    case TcRequest::kNetem:
      if (!plan.netem) throw std::runtime_error("the plan has no netem part");
      msg = netem_add_message(ifindex, plan).release();
      break;
    case TcRequest::kFilter:
      rc = rtnl_cls_build_add_request(filter_request(ifindex, plan).get(), flags, &msg);
      break;
  }
  check_alloc(rc, "build a request");
  auto held = owned(msg);
  const nlmsghdr* hdr = nlmsg_hdr(held.get());
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(hdr);
  return std::vector<std::uint8_t>(bytes, bytes + hdr->nlmsg_len);
}

struct TcShaper::Impl {
  Impl(int netns_fd, std::string name) : interface(std::move(name)), sock(netns_fd) {
    rtnl_link* raw = nullptr;
    int rc = rtnl_link_get_kernel(sock.get(), 0, interface.c_str(), &raw);
    if (rc < 0) throw std::runtime_error(fmt::format("no interface \"{}\" in that namespace: {}", interface, sock.describe(rc)));
    ifindex = rtnl_link_get_ifindex(owned(raw).get());
  }

  [[noreturn]] void fail(const std::string& what, int rc) const {
    throw std::runtime_error(fmt::format("{}: {}: {}", interface, what, sock.describe(rc)));
  }

  // The interface's root qdisc as "tbf 8001:" (dumped; only for messages and checks).
  std::optional<std::pair<std::string, std::uint32_t>> root_qdisc() {
    nl_cache* raw = nullptr;
    if (rtnl_qdisc_alloc_cache(sock.get(), &raw) < 0) return std::nullopt;
    auto cache = owned(raw);
    rtnl_qdisc* q = rtnl_qdisc_get_by_parent(cache.get(), ifindex, TC_H_ROOT);
    if (!q) return std::make_pair(std::string("noop"), 0u);
    auto held = owned(q);
    const char* kind = rtnl_tc_get_kind(TC_CAST(q));
    return std::make_pair(std::string(kind ? kind : "?"), rtnl_tc_get_handle(TC_CAST(q)));
  }

  // Whether the htb 1: root is still in place (false also when it cannot be told).
  bool root_in_place() {
    auto root = root_qdisc();
    return !root || (root->first == "htb" && root->second == kRootHandle);
  }

  void add_root() {
    auto q = root_request(ifindex);
    int rc = sock.call([&](nl_sock* sk) { return rtnl_qdisc_add(sk, q.get(), NLM_F_CREATE | NLM_F_EXCL); });
    if (rc == -NLE_EXIST) {
      auto root = root_qdisc();
      if (root && root->second != 0)
        throw std::runtime_error(fmt::format(
            "{}: its root qdisc is {} {}, not the kernel's default; the shaper does not take over a root it did not create",
            interface, root->first, handle_text(root->second)));
      fail("another qdisc already has handle 1:", rc);
    }
    if (rc < 0) fail("cannot add the root htb qdisc 1:", rc);
    root = true;
  }

  // Deletes the root htb 1: and, with it, every class, netem and filter under it. Handle
  // and kind are in the request: the kernel deletes only an htb with handle 1:.
  void delete_root() {
    auto q = root_request(ifindex);
    int rc = sock.call([&](nl_sock* sk) { return rtnl_qdisc_delete(sk, q.get()); });
    // A root that is gone (or was replaced) answers ENOENT or EINVAL "Invalid handle".
    if (!gone(rc) && root_in_place()) fail("cannot delete the root htb qdisc 1:", rc);
    root = false;
  }

  // tc filter del dev DEV parent 1: protocol ip prio P; tc class del dev DEV classid 1:N
  void delete_rule(const RulePlan& plan) {
    auto f = owned(rtnl_cls_alloc());
    place(TC_CAST(f.get()), ifindex, kRootHandle, 0);
    check_alloc(rtnl_tc_set_kind(TC_CAST(f.get()), "u32"), "u32 filter");
    rtnl_cls_set_prio(f.get(), plan.prio);  // never 0, which would mean every filter
    rtnl_cls_set_protocol(f.get(), ETH_P_IP);
    int rc = sock.call([&](nl_sock* sk) { return rtnl_cls_delete(sk, f.get(), 0); });
    // Without our root the kernel answers EINVAL ("Parent Qdisc doesn't exists").
    if (!gone(rc) && root_in_place()) fail(fmt::format("cannot delete filter prio {}", plan.prio), rc);
    delete_class(plan.id);
  }

  void delete_class(int id) {
    auto c = owned(rtnl_class_alloc());
    place(TC_CAST(c.get()), ifindex, kRootHandle, class_handle(id));
    int rc = sock.call([&](nl_sock* sk) { return rtnl_class_delete(sk, c.get()); });
    if (!gone(rc) && root_in_place()) fail(fmt::format("cannot delete class {}", handle_text(class_handle(id))), rc);
  }

  int free_id() const {
    for (int id = kShaperFirstId; id <= kShaperLastId; ++id)
      if (!rules.count(id)) return id;
    throw std::runtime_error(fmt::format("{}: all {} shaper rules are in use", interface, kShaperLastId - 1));
  }

  std::string interface;
  common::RouteSocket sock;
  int ifindex = 0;
  bool root = false;
  std::map<int, RulePlan> rules;
};

TcShaper::TcShaper(int netns_fd, std::string interface)
    : impl_(std::make_unique<Impl>(netns_fd, std::move(interface))) {}

TcShaper::~TcShaper() {
  try {
    if (impl_->root) impl_->delete_root();
  } catch (...) {
    // Best effort: the namespace, and the qdisc with it, usually goes soon after.
  }
}

int TcShaper::add(const ShapeRule& rule) {
  Impl& s = *impl_;
  const RulePlan plan = plan_rule(rule, s.free_id());  // validates before touching anything
  const bool made_root = !s.root;
  if (made_root) s.add_root();
  bool made_class = false;
  try {
    auto c = class_request(s.ifindex, plan);
    int rc = s.sock.call([&](nl_sock* sk) { return rtnl_class_add(sk, c.get(), NLM_F_CREATE | NLM_F_EXCL); });
    if (rc < 0) s.fail(fmt::format("cannot add class {}", handle_text(class_handle(plan.id))), rc);
    made_class = true;
    if (plan.netem) {
      rc = s.sock.call([&](nl_sock* sk) { return send_sync(sk, netem_add_message(s.ifindex, plan).release()); });
      if (rc == -NLE_OBJ_NOTFOUND) s.fail("the kernel has no sch_netem (netem qdisc)", rc);
      if (rc < 0) s.fail("cannot add the netem qdisc", rc);
    }
    auto f = filter_request(s.ifindex, plan);
    rc = s.sock.call([&](nl_sock* sk) { return rtnl_cls_add(sk, f.get(), NLM_F_CREATE | NLM_F_EXCL); });
    if (rc < 0) s.fail(fmt::format("cannot add the u32 filter prio {}", plan.prio), rc);
  } catch (...) {
    // Leave nothing of this rule: its class (with its netem), or the root made for it.
    try {
      if (made_root) {
        s.delete_root();
      } else if (made_class) {
        s.delete_class(plan.id);
      }
    } catch (...) {
    }
    throw;
  }
  s.rules.emplace(plan.id, plan);
  return plan.id;
}

void TcShaper::remove(int id) {
  Impl& s = *impl_;
  auto it = s.rules.find(id);
  if (it == s.rules.end()) return;
  if (s.rules.size() == 1) {
    s.delete_root();  // one message takes the filter, class and netem with it
  } else {
    s.delete_rule(it->second);
  }
  s.rules.erase(it);
}

const std::string& TcShaper::interface() const { return impl_->interface; }

std::string TcShaper::root_handle() const { return impl_->root ? handle_text(kRootHandle) : ""; }

bool TcShaper::netem_available(std::string* why) {
  static const NetemProbe probe = probe_netem();  // thread-safe, once per process
  if (why) *why = probe.why;
  return probe.available;
}

}  // namespace chaosbench::faults
