#include "common/kernel/route_socket.h"

#include <cstring>
#include <fmt/format.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <new>
#include <stdexcept>
#include <sys/socket.h>

#include "common/kernel/netns.h"

namespace chaosbench::common {

RouteSocket::RouteSocket(int netns_fd) {
  auto open = [this] {
    sk_ = nl_socket_alloc();
    if (!sk_) throw std::bad_alloc();
    if (int rc = nl_connect(sk_, NETLINK_ROUTE); rc < 0) {
      nl_socket_free(sk_);
      sk_ = nullptr;
      throw std::runtime_error(fmt::format("cannot open a netlink route socket: {}", nl_geterror(rc)));
    }
  };
  if (netns_fd >= 0) {
    in_netns(netns_fd, open);
  } else {
    open();
  }
  // Kernel >= 4.12: a reason string with each error; acks without an echo of our request
  // (a netem distribution table makes it 8 KiB). Older kernels just lack the text.
  int one = 1;
  ::setsockopt(nl_socket_get_fd(sk_), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  ::setsockopt(nl_socket_get_fd(sk_), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  nl_socket_modify_err_cb(sk_, NL_CB_CUSTOM, &RouteSocket::on_error, this);
}

RouteSocket::~RouteSocket() { nl_socket_free(sk_); }

int RouteSocket::call(const std::function<int(nl_sock*)>& request) {
  int rc = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    kernel_message_.clear();
    rc = request(sk_);
    if (rc != -NLE_AGAIN) break;
  }
  return rc;
}

std::string RouteSocket::describe(int rc) const {
  std::string text = nl_geterror(rc);
  if (!kernel_message_.empty()) text += " (kernel: " + kernel_message_ + ")";
  return text;
}

// libnl's error callback: returning NL_STOP makes the request return the mapped errno.
int RouteSocket::on_error(sockaddr_nl*, nlmsgerr* err, void* arg) {
  auto* self = static_cast<RouteSocket*>(arg);
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const char*>(err) - NLMSG_HDRLEN);
  if (!(hdr->nlmsg_flags & NLM_F_ACK_TLVS)) return NL_STOP;
  // TLVs follow the error and (unless capped) the echoed request's payload.
  std::size_t payload = sizeof(nlmsgerr);
  if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) payload += err->msg.nlmsg_len - NLMSG_HDRLEN;
  const char* start = reinterpret_cast<const char*>(err) + NLMSG_ALIGN(payload);
  const char* end = reinterpret_cast<const char*>(hdr) + hdr->nlmsg_len;
  if (start >= end) return NL_STOP;
  nlattr* attr = nullptr;
  int rem = 0;
  nla_for_each_attr(attr, reinterpret_cast<nlattr*>(const_cast<char*>(start)), static_cast<int>(end - start), rem) {
    if (nla_type(attr) == NLMSGERR_ATTR_MSG) {
      const char* text = static_cast<const char*>(nla_data(attr));
      self->kernel_message_.assign(text, ::strnlen(text, static_cast<std::size_t>(nla_len(attr))));
    }
  }
  return NL_STOP;
}

}  // namespace chaosbench::common
