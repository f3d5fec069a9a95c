// TrainRank's failures and recovery (train_rank.h): replica checks after a bit flip,
// device and collective failures, and elastic recovery, re-admission and resizing.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/train/train_rank.h"

namespace chaosbench::bench::train {
namespace {

// Consecutive failed recoveries before an elastic rank gives up.
constexpr int kMaxRecoveryTries = 5;
// How long a returning rank waits to be admitted.
constexpr auto kAdmissionTimeout = std::chrono::minutes(10);

bool device_lost(const std::exception& e) {
  const auto* d = dynamic_cast<const DeviceError*>(&e);
  return d && d->source() == DeviceError::Source::kDevice;
}

}  // namespace

// The replicas' fingerprints of the state after the previous step, read from this step's
// extras. True when they agree (or there is nothing to compare); after a repair, false.
bool TrainRank::check_replicas(const StepComm& comm) {
  const int n = static_cast<int>(membership_.members.size());
  const auto v = compare_fingerprints(comm.extras, kExtraFingerprints, n);
  if (!v.complete || v.agree) return true;
  std::vector<int> bad, good;
  for (int m : v.minority) bad.push_back(membership_.members[static_cast<std::size_t>(m)]);
  for (int m : v.majority) good.push_back(membership_.members[static_cast<std::size_t>(m)]);
  const std::string error =
      fmt::format("replicas disagree after step {}: rank(s) {} differ from rank(s) {} (silent data corruption)", step_,
                  fmt::join(bad, ","), fmt::join(good, ","));
  metrics_.event("failure_detected", {{"step", step_}, {"error", error}, {"reason", std::string("sdc")}});
  metrics_.event("sdc_detected", {{"step", step_ + 1}, {"state_step", step_}, {"ranks", fmt::format("{}", fmt::join(bad, ","))},
                                  {"action", std::string(v.strict_majority ? "repaired" : "unrecoverable")}});
  metrics_.flush();
  log(error);
  if (!v.strict_majority) throw UnrecoverableCorruption(error + "; no majority names the good state");
  const int source = v.majority.front();
  step_ = state_.broadcast(context_, source, step_, cfg_.timeout);
  fingerprint_.reset();
  log(fmt::format("state of step {} taken from rank {}; computing step {} again", step_,
                  membership_.members[static_cast<std::size_t>(source)], step_ + 1));
  start("repaired");
  return false;
}

// A failed device call: the context is lost (or memory is short), and only a new process
// recovers, which the harness starts (restart), or which joins (elastic).
int TrainRank::device_failed(const DeviceError& e) {
  report_device_error(metrics_, e, step_);
  log(fmt::format("device error: {}", e.what()));
  return kTrainDeviceError;
}

// Elastic: the survivors of a failure agree on a new generation and go on from the
// source's state. Returns false when this rank should give up.
bool TrainRank::recover(const std::string& error) {
  for (int tries = 0; tries < kMaxRecoveryTries; ++tries) {
    const auto t0 = Clock::now();
    disconnect();
    Membership next = elastic_->agree_after_failure(membership_, step_, cfg_.timeout);
    if (next.index_of(cfg_.rank) < 0) {  // too slow to be listed: come back as a joiner
      log(fmt::format("not in generation {} ({}): joining again", next.generation, fmt::join(next.members, ",")));
      return rejoin(next.generation);
    }
    try {
      connect(next);
      if (context_) step_ = state_.broadcast(context_, next.index_of(next.source), step_, cfg_.timeout);
      log(fmt::format("recovered from \"{}\" in {:.0f} ms", error, ms_between(t0, Clock::now())));
      start("recovered");
      return true;
    } catch (const std::exception& e) {
      if (device_lost(e)) throw;  // no new generation helps a rank whose device is gone
      log(fmt::format("recovery into generation {} failed: {}", next.generation, e.what()));
      membership_ = next;
    }
  }
  return false;
}

// A returning (or too slow) rank: waits to be admitted, then takes the source's state.
bool TrainRank::rejoin(int after) {
  for (int tries = 0; tries < kMaxRecoveryTries; ++tries) {
    auto admitted = elastic_->wait_for_admission(after, kAdmissionTimeout);
    if (!admitted) {
      log(elastic_->finished() ? "training finished before this rank was admitted" : "was not admitted in time");
      return false;
    }
    try {
      connect(*admitted);
      if (context_) step_ = state_.broadcast(context_, admitted->index_of(admitted->source), step_, cfg_.timeout);
      start("rejoined");
      return true;
    } catch (const std::exception& e) {  // a member died meanwhile: ask again
      if (device_lost(e)) throw;
      log(fmt::format("joining generation {} failed: {}", admitted->generation, e.what()));
      disconnect();
      after = admitted->generation;
    }
  }
  return false;
}

// At a step boundary, with ranks waiting: the leader writes the next generation with
// them, everyone moves to it and the newcomers receive the state.
void TrainRank::resize(std::vector<int> joiners) {
  const Membership current = membership_;
  const bool lead = leader();
  std::optional<Membership> next;
  if (lead) next = elastic_->grow(current, joiners, step_);
  else next = elastic_->await_generation(current.generation + 1, cfg_.timeout);
  if (!next) throw CollectiveError("the leader did not publish the next generation");
  // A failure's survivors may have claimed that generation first: then it is not this
  // admission, and this rank recovers from the failure like the others.
  const bool expected = next->source == current.leader() &&
                        std::all_of(current.members.begin(), current.members.end(),
                                    [&](int r) { return next->index_of(r) >= 0; });
  if (!expected)
    throw CollectiveError(fmt::format("generation {} is not the admission of {} ({} from rank {})", next->generation,
                                      fmt::join(joiners, ","), fmt::join(next->members, ","), next->source));
  try {
    disconnect();
    connect(*next);
    if (context_) step_ = state_.broadcast(context_, next->index_of(next->source), step_, cfg_.timeout);
  } catch (...) {
    // A joiner that died while waiting would be admitted again at every step boundary;
    // a live one registers again.
    if (lead) elastic_->forget_joiners(joiners);
    throw;
  }
  start("resized");
}

// A collective failed (a peer died or hung, or the library returned an error): reported;
// then true when this rank goes on (elastic recovery succeeded).
bool TrainRank::collective_failed(const std::string& error, const char* reason, int code) {
  {
    Labels fields{{"step", step_}, {"error", error}, {"reason", std::string(reason)}};
    if (code != 0) fields.emplace("code", static_cast<std::int64_t>(code));
    metrics_.event("failure_detected", std::move(fields));
  }
  metrics_.flush();
  log(fmt::format("step {} failed: {}", step_ + 1, error));
  if (!elastic_) return false;
  // Left out while the others trained to the end, recover() fails: the caller then ends
  // this rank with success when the job is done.
  return recover(error);
}

}  // namespace chaosbench::bench::train
