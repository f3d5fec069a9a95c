#include "harness/collect/mesh_window.h"

#include <algorithm>

#include "common/values/percentile.h"

namespace chaosbench::harness {

std::uint32_t MeshWindow::sent(std::int64_t sent_ns, std::int64_t window) {
  probes_.push_back({next_seq_, sent_ns, window, false});
  return next_seq_++;
}

std::optional<std::int64_t> MeshWindow::answered(std::uint32_t seq, std::int64_t rx_ns, std::int64_t held_ns) {
  if (probes_.empty()) return std::nullopt;
  // Sequence numbers wrap after 2^32 probes; the distance from the oldest waiting one is
  // what locates it.
  const std::uint32_t offset = seq - probes_.front().seq;
  if (offset >= probes_.size()) return std::nullopt;  // settled already (lost), or never sent
  auto& p = probes_[offset];
  if (p.answered) return std::nullopt;  // a duplicate counts once
  // The send time is ours, never the echo's; the hold time is the reflector's word, so it
  // is believed only within the round trip and the timeout.
  const std::int64_t rtt = rx_ns - p.sent_ns;
  if (held_ns < 0 || held_ns > rtt || rtt < 0 || rtt > kMaxRoundTripNs) return std::nullopt;
  p.answered = true;
  if (rtts_ms_.size() < kMaxRoundTrips) rtts_ms_.push_back(static_cast<double>(rtt - held_ns) / 1e6);
  return rtt - held_ns;
}

std::optional<double> MeshWindow::take_rtt_ms() {
  if (rtts_ms_.empty()) return std::nullopt;
  const double m = common::median(std::move(rtts_ms_));
  rtts_ms_.clear();
  return m;
}

std::vector<MeshWindow::Loss> MeshWindow::settle(std::int64_t now_ns, std::int64_t timeout_ns, bool all) {
  std::vector<Loss> done;
  while (!probes_.empty() && (all || probes_.front().sent_ns + timeout_ns <= now_ns)) {
    const Probe p = probes_.front();
    probes_.pop_front();
    if (open_ && open_->window != p.window) {
      done.push_back(*open_);
      open_.reset();
    }
    if (!open_) open_ = Loss{p.window, 0, 0};
    ++open_->sent;
    if (!p.answered) ++open_->lost;
  }
  // The open window is complete once the next waiting probe belongs to a later one.
  if (open_ && (all || (!probes_.empty() && probes_.front().window != open_->window))) {
    done.push_back(*open_);
    open_.reset();
  }
  return done;
}

}  // namespace chaosbench::harness
