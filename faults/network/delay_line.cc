// The netlink half of the delay line: one thread per queue that reads packet metadata
// from nfnetlink_queue, asks DelaySchedule what to do with each packet, and gives
// verdicts when their time comes. Why it is fast enough for a 1 Gbit/s stream at 5 ms on
// 2 cores (a one-packet-at-a-time loop reached ~0.6 Gbit/s):
//   - NFQA_CFG_F_GSO: GSO super-packets (up to 64 KiB) are queued whole, not segmented,
//     so a TCP stream costs a few thousand queue entries a second, not ~100 000;
//   - NFQNL_COPY_META unless corruption needs the bytes: messages are ~100 bytes;
//   - in-order releases are one nfq_set_verdict_batch each: the kernel accepts every
//     queued id <= the given one, which is right only because every packet not yet due
//     has a larger id (drops, reorders and held corrupted packets get their own verdicts);
//   - each wake-up drains the socket with MSG_DONTWAIT; a large receive buffer and
//     NETLINK_NO_ENOBUFS keep a burst from turning into an error.
// Precision (goal: added RTT within 5% of the asked delay from 1 ms up):
//   - delays count from the kernel's receive timestamp, not from when the thread read
//     the message (~50 us later on this 2-core VM);
//   - the thread sleeps in ppoll with a nanosecond timeout, 1 ns timer slack and, where
//     allowed, SCHED_FIFO; it still wakes ~20-100 us late here, so it learns that
//     lateness and aims that much early (without it: 6% at 1 ms, with it: ~1%).
// No busy waiting: with nothing held the thread sleeps until a packet or the stop.
#include "faults/network/delay_line.h"

#include <algorithm>
#include <cmath>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <future>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" {
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <libnfnetlink/libnfnetlink.h>
}

#include "faults/network/delay_schedule.h"
#include "common/kernel/netns.h"

namespace chaosbench::faults {
namespace {

using Clock = std::chrono::steady_clock;

constexpr unsigned kReceiveBuffer = 32u << 20;  // bytes; charged only while unread
constexpr int kMaxMessagesPerWake = 512;        // then release what is due before reading on
constexpr std::uint32_t kCopyRange = 0xffff;    // whole packets when corruption needs them
constexpr int kFifoPriority = 1;                // above every normal thread, below the kernel's
constexpr std::chrono::microseconds kLatenessFloorCap{100};
constexpr std::chrono::microseconds kMaxLateness{500};

std::runtime_error bind_error(std::uint16_t queue, const char* step, int err) {
  std::string why = std::strerror(err);
  if (err == EBUSY || err == EEXIST || err == EPERM)
    why += "; another process (or DelayLine) already serves this queue number in this namespace";
  else if (err == EOPNOTSUPP || err == EPROTONOSUPPORT || err == ENOENT || err == EAFNOSUPPORT)
    why += "; is nfnetlink_queue (CONFIG_NETFILTER_NETLINK_QUEUE) in this kernel?";
  return std::runtime_error(fmt::format("delay line: NFQUEUE {}: {} failed: {}", queue, step, why));
}

}  // namespace

struct DelayLine::Impl {
  struct Held {
    std::uint32_t id;
    Clock::time_point arrival;
    Clock::time_point release;
    std::vector<unsigned char> payload;  // non-empty: corrupted bytes to give back
  };

  Impl(int fd, std::uint16_t q, const DelayLineSettings& s) : netns_fd(fd), queue(q), settings(s), schedule(s) {}

  // Set before the thread starts, read-only afterwards.
  const int netns_fd;
  const std::uint16_t queue;
  const DelayLineSettings settings;
  int wake_fd = -1;  // eventfd: the destructor's stop request
  std::thread thread;

  mutable std::mutex stats_mutex;
  DelayLineStats shared_stats;  // guarded by stats_mutex; published once per wake-up

  // The thread's own state.
  DelaySchedule schedule;
  nfq_handle* handle = nullptr;
  nfq_q_handle* qhandle = nullptr;
  int nl_fd = -1;
  int timestamp_fd = -1;  // a socket with SO_TIMESTAMPNS: keeps kernel receive timestamps on
  Clock::duration lateness{};  // running estimate of how late ppoll's timer wakes us
  int wakeups = 0;             // timer wake-ups in that estimate, up to 16
  std::deque<Held> held;
  DelayLineStats stats;
  double held_sum_us = 0, held_error_sum_us = 0;
  Clock::time_point read_at{};  // when the message being handled was read
  std::uint32_t last_id = 0;
  bool stopping = false;
  std::vector<char> buffer;

  void run(std::promise<void>& ready);
  void bind();
  void serve();
  void drain();
  void release_due(Clock::time_point now, Clock::time_point due);
  void shut_down();
  void publish();
  Clock::time_point arrival_of(nfq_data* nfad) const;
  void verdict(std::uint32_t id, std::uint32_t what, const std::vector<unsigned char>* payload = nullptr);
  int on_packet(nfq_data* nfad);
  static int callback(nfq_q_handle*, nfgenmsg*, nfq_data* nfad, void* self) {
    return static_cast<Impl*>(self)->on_packet(nfad);
  }
};

void DelayLine::Impl::run(std::promise<void>& ready) {
  try {
    common::enter_netns(netns_fd);
    bind();
  } catch (...) {
    if (qhandle) nfq_destroy_queue(qhandle);
    if (handle) nfq_close(handle);
    if (timestamp_fd >= 0) close(timestamp_fd);
    ready.set_exception(std::current_exception());
    return;
  }
  ready.set_value();
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  sched_param param{};
  param.sched_priority = kFifoPriority;
  pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);  // EPERM: stay SCHED_OTHER
  try {
    serve();
  } catch (const std::exception& e) {
    std::lock_guard lock(stats_mutex);
    shared_stats.error = e.what();
  }
  shut_down();
}

void DelayLine::Impl::bind() {
  handle = nfq_open();
  if (!handle) throw bind_error(queue, "nfq_open", errno);
  // Take the queue only once it is known to be free: nfq_create_queue fails when another
  // socket in this namespace has bound the same number.
  qhandle = nfq_create_queue(handle, queue, &Impl::callback, this);
  if (!qhandle) throw bind_error(queue, "binding the queue", errno ? errno : EBUSY);
  const bool need_bytes = settings.corrupt > 0;
  if (nfq_set_mode(qhandle, need_bytes ? NFQNL_COPY_PACKET : NFQNL_COPY_META, need_bytes ? kCopyRange : 0) < 0)
    throw bind_error(queue, "nfq_set_mode", errno);
  // With F_GSO the kernel skips segmenting GSO packets and skips completing a partial
  // checksum; corruption needs both (one bit of one segment, then a checksum that really
  // fails), so it goes without.
  if (!need_bytes && nfq_set_queue_flags(qhandle, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0)
    throw bind_error(queue, "setting NFQA_CFG_F_GSO", errno);
  // The kernel's own limit sits above ours, so overflows are ours to count.
  if (nfq_set_queue_maxlen(qhandle, settings.queue_limit + 4096) < 0)
    throw bind_error(queue, "nfq_set_queue_maxlen", errno);
  nl_fd = nfq_fd(handle);
  nfnl_rcvbufsiz(nfq_nfnlh(handle), kReceiveBuffer);
  int one = 1;
  setsockopt(nl_fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
  buffer.resize(need_bytes ? kCopyRange + 4096 : 4096);
  // Packets carry their arrival time (NFQA_TIMESTAMP) only while some socket on the host
  // asked for receive timestamps (a global switch, as any ping flips it); this socket
  // keeps it on for the delay line's life, so the delay counts from when the packet
  // entered the namespace's stack, not from when this thread got to read it (~50 us
  // later here, a 5% error at 1 ms).
  timestamp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (timestamp_fd >= 0) setsockopt(timestamp_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

void DelayLine::Impl::serve() {
  pollfd fds[2] = {{nl_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
  for (;;) {
    timespec timeout{};
    timespec* wait = nullptr;
    Clock::time_point target{};
    bool timed = false;  // slept on the timer, so its lateness can be learned
    if (!held.empty()) {
      target = held.front().release - lateness;
      auto left = std::max(target - Clock::now(), Clock::duration::zero());
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timeout.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
      timeout.tv_nsec = static_cast<long>(ns % 1'000'000'000);
      wait = &timeout;
      timed = ns > 0;
    }
    int rc = ppoll(fds, 2, wait, nullptr);
    if (rc < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "delay line: ppoll");
    if (rc > 0 && fds[1].revents) return;
    if (rc > 0 && fds[0].revents) drain();
    const Clock::time_point now = Clock::now();
    if (rc == 0 && timed) {
      // The timer fired: learn how late. A plain mean of the first wake-ups, then a
      // running mean over ~16. Each sample is capped at 3x the estimate (100 us at least):
      // one stall must not teach the line to release the next packets early. Of the
      // estimators tried here (mean, this one, a median tracker), this one kept the
      // 1 ms effect error smallest and steadiest.
      const auto cap = std::max(3 * lateness, Clock::duration(kLatenessFloorCap));
      const auto late = std::clamp(now - target, Clock::duration::zero(), cap);
      wakeups = std::min(wakeups + 1, 16);
      lateness += (late - lateness) / wakeups;
      lateness = std::min(lateness, Clock::duration(kMaxLateness));
    }
    // Aim early by the usual lateness: on average packets then leave on time.
    release_due(now, now + lateness);
    publish();
  }
}

// Reads what the socket holds (up to a bound, so releases stay on time under a flood).
void DelayLine::Impl::drain() {
  for (int i = 0; i < kMaxMessagesPerWake; ++i) {
    ssize_t n = recv(nl_fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // ENOBUFS (should NETLINK_NO_ENOBUFS not hold): the packets whose messages were lost
      // stay queued in the kernel until the next batch verdict, whose id covers theirs,
      // accepts them undelayed.
      if (errno == EINTR || errno == ENOBUFS) continue;
      throw std::system_error(errno, std::generic_category(), "delay line: recv from nfnetlink_queue");
    }
    read_at = Clock::now();
    // Returns < 0 for netlink error replies (a batch verdict that found nothing): harmless.
    nfq_handle_packet(handle, buffer.data(), static_cast<int>(n));
  }
}

int DelayLine::Impl::on_packet(nfq_data* nfad) {
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(nfad);
  if (!header) return 0;
  const std::uint32_t id = ntohl(header->packet_id);
  last_id = id;
  if (stopping) {  // messages read while unbinding: let them through
    verdict(id, NF_ACCEPT);
    return 0;
  }
  ++stats.packets;
  if (held.size() >= settings.queue_limit) {
    ++stats.overflows;
    verdict(id, NF_DROP);
    return 0;
  }
  const Clock::time_point arrival = arrival_of(nfad);
  const PacketFate fate = schedule.next(arrival);
  if (fate.kind == PacketFate::Kind::kDrop) {
    ++stats.dropped;
    verdict(id, NF_DROP);
    return 0;
  }
  std::vector<unsigned char> payload;
  if (fate.corrupt) {
    unsigned char* data = nullptr;
    int length = nfq_get_payload(nfad, &data);
    if (length > 0) {
      payload.assign(data, data + length);
      if (schedule.flip_bit(payload.data(), payload.size()))
        ++stats.corrupted;
      else
        payload.clear();
    }
  }
  if (fate.kind == PacketFate::Kind::kReorder) {
    ++stats.reordered;
    ++stats.released;
    verdict(id, NF_ACCEPT, payload.empty() ? nullptr : &payload);
    return 0;
  }
  held.push_back(Held{id, arrival, fate.release, std::move(payload)});
  return 0;
}

// The kernel's receive timestamp when it is plausible, else the time the message was read.
// It is CLOCK_REALTIME in microseconds; a TCP packet may instead carry its sender's
// monotonic departure time (EDT), which the plausibility window rejects.
Clock::time_point DelayLine::Impl::arrival_of(nfq_data* nfad) const {
  timeval stamp{};
  if (nfq_get_timestamp(nfad, &stamp) != 0) return read_at;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const auto age = std::chrono::seconds(now.tv_sec - stamp.tv_sec) +
                   std::chrono::nanoseconds(now.tv_nsec - static_cast<long>(stamp.tv_usec) * 1000);
  if (age < Clock::duration::zero() || age > std::chrono::milliseconds(10)) return read_at;
  return read_at - std::chrono::duration_cast<Clock::duration>(age);
}

void DelayLine::Impl::verdict(std::uint32_t id, std::uint32_t what, const std::vector<unsigned char>* payload) {
  // nfq_set_verdict, not _verdict2: the latter would overwrite the packet's mark.
  if (payload)
    nfq_set_verdict(qhandle, id, what, static_cast<std::uint32_t>(payload->size()), payload->data());
  else
    nfq_set_verdict(qhandle, id, what, 0, nullptr);
}

// Accepts every held packet whose release is at or before `due`, in order.
void DelayLine::Impl::release_due(Clock::time_point now, Clock::time_point due) {
  bool batch = false;
  std::uint32_t batch_id = 0;
  while (!held.empty() && held.front().release <= due) {
    Held& p = held.front();
    if (!p.payload.empty()) {
      // Its bytes need a verdict of its own; flush the in-order batch before it first.
      if (batch) nfq_set_verdict_batch(qhandle, batch_id, NF_ACCEPT);
      batch = false;
      verdict(p.id, NF_ACCEPT, &p.payload);
    } else {
      batch_id = p.id;
      batch = true;
    }
    held_sum_us += std::chrono::duration<double, std::micro>(now - p.arrival).count();
    held_error_sum_us += std::abs(std::chrono::duration<double, std::micro>(now - p.release).count());
    ++stats.released;
    held.pop_front();
  }
  if (batch) nfq_set_verdict_batch(qhandle, batch_id, NF_ACCEPT);
}

// Accepts everything at once and unbinds. Messages still unread are drained first (they
// are accepted as read); then one batch verdict whose id lies far past the last one seen
// accepts every packet still queued, held or not yet read (the kernel compares ids
// modulo 2^32, so last + 2^30 is "after" all of them). Unbinding drops what is queued,
// hence the verdicts first.
void DelayLine::Impl::shut_down() {
  stopping = true;
  held.clear();
  try {
    drain();
  } catch (const std::exception&) {
  }
  nfq_set_verdict_batch(qhandle, last_id + (1u << 30), NF_ACCEPT);
  publish();
  nfq_destroy_queue(qhandle);
  nfq_close(handle);
  close(timestamp_fd);
}

void DelayLine::Impl::publish() {
  std::lock_guard lock(stats_mutex);
  std::string error = std::move(shared_stats.error);
  shared_stats = stats;
  shared_stats.error = std::move(error);
  const std::uint64_t delayed = stats.released - stats.reordered;
  if (delayed > 0) {
    shared_stats.held_mean_us = held_sum_us / static_cast<double>(delayed);
    shared_stats.held_error_mean_us = held_error_sum_us / static_cast<double>(delayed);
  }
}

DelayLine::DelayLine(int netns_fd, std::uint16_t queue_num, const DelayLineSettings& settings)
    : impl_(std::make_unique<Impl>(netns_fd, queue_num, settings)) {
  impl_->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl_->wake_fd < 0) throw std::system_error(errno, std::generic_category(), "delay line: eventfd");
  // The thread owns the promise: set_value may still be returning when the constructor
  // has already seen the result and gone.
  std::promise<void> ready;
  auto bound = ready.get_future();
  impl_->thread = std::thread([impl = impl_.get(), ready = std::move(ready)]() mutable { impl->run(ready); });
  try {
    bound.get();
  } catch (...) {
    impl_->thread.join();
    close(impl_->wake_fd);
    throw;
  }
}

DelayLine::~DelayLine() {
  const std::uint64_t one = 1;
  if (write(impl_->wake_fd, &one, sizeof one) != sizeof one) {
    // An eventfd write fails only on counter overflow: the thread is being woken anyway.
  }
  impl_->thread.join();
  close(impl_->wake_fd);
}

DelayLineStats DelayLine::stats() const {
  std::lock_guard lock(impl_->stats_mutex);
  return impl_->shared_stats;
}

std::uint16_t DelayLine::queue_num() const { return impl_->queue; }

}  // namespace chaosbench::faults
