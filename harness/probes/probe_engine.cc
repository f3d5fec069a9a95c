// The probe threads, their modes and the stop condition. See probe_engine.h.
#include "harness/probes/probe_engine.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

namespace chaosbench::harness {

// A probe's state: its check (used only by its thread) and its record (under mutex_).
struct ProbeEngine::Probe {
  const ProbeSpec* spec = nullptr;
  std::unique_ptr<probes::ProbeCheck> check;
  reports::ProbeRecord record;
  std::optional<bool> last_ok;              // the latest outcome while active
  std::string last_evidence;
  // When the first failure of the current streak was due. A streak is measured between
  // due times, which the cadence spaces by exactly `interval`: `for: 3s` at 1 s intervals
  // is decided on the fourth failure, never on a fifth because one evaluation ran longer.
  std::optional<std::chrono::steady_clock::time_point> failing_since_due;
  bool passed_once = false;                 // a continuous probe's start-up is over
  bool aborts = false;                      // named in abort.when
};

namespace {

// A flapping probe could otherwise grow its record without bound over a long run.
constexpr std::size_t kMaxTransitions = 10'000;

}  // namespace

ProbeEngine::ProbeEngine(const std::vector<ProbeSpec>& probes, const std::optional<AbortSpec>& abort,
                         const MakeCheck& make, Hooks hooks)
    : specs_(probes), abort_(abort), hooks_(std::move(hooks)) {
  for (const auto& spec : specs_) {
    auto p = std::make_unique<Probe>();
    p->spec = &spec;
    p->check = make(spec);
    p->record.name = spec.name;
    p->record.kind = std::string(to_string(spec.kind));
    p->record.mode = probe_mode_text(spec);
    p->aborts = abort_ && std::find(abort_->when.begin(), abort_->when.end(), spec.name) != abort_->when.end();
    probes_.push_back(std::move(p));
  }
}

ProbeEngine::~ProbeEngine() { stop(); }

void ProbeEngine::start() {
  for (auto& p : probes_) threads_.emplace_back([this, probe = p.get()] { loop(*probe); });
}

void ProbeEngine::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void ProbeEngine::fault_active(const std::string& fault, bool active) {
  {
    std::lock_guard lock(mutex_);
    if (active) {
      active_faults_.insert(fault);
    } else if (auto it = active_faults_.find(fault); it != active_faults_.end()) {
      active_faults_.erase(it);
    }
  }
  changed_.notify_all();
}

void ProbeEngine::faults_started() {
  {
    std::lock_guard lock(mutex_);
    faults_started_ = true;
  }
  changed_.notify_all();
}

void ProbeEngine::faults_finished() {
  {
    std::lock_guard lock(mutex_);
    faults_finished_ = true;
  }
  changed_.notify_all();
}

bool ProbeEngine::active(const Probe& p) const {
  switch (p.spec->mode) {
    case ProbeMode::kBefore: return !faults_started_;
    case ProbeMode::kContinuous: return true;
    case ProbeMode::kDuring: return active_faults_.count(p.spec->during) > 0;
    case ProbeMode::kAfter: return faults_finished_;
  }
  return false;
}

// Evaluates every interval while active, on a fixed cadence from the first evaluation;
// waits for a state change while inactive. An inactive stretch ends a failing streak: a
// `during` probe's failures in two windows are not one long failure.
void ProbeEngine::loop(Probe& p) {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<Clock::duration>(p.spec->interval.value);
  std::unique_lock lock(mutex_);
  Clock::time_point next = Clock::now();
  while (!stopping_) {
    if (!active(p)) {
      if (p.last_ok && p.record.transitions.size() < kMaxTransitions) {  // the end of an active stretch
        reports::ProbeTransition end;
        end.t = hooks_.now_s();
        end.active = false;
        end.evidence = "not active";
        p.record.transitions.push_back(std::move(end));
      }
      p.failing_since_due.reset();
      p.last_ok.reset();
      changed_.wait(lock, [&] { return stopping_ || active(p); });
      next = Clock::now();
      continue;
    }
    if (Clock::now() < next) {
      changed_.wait_until(lock, next, [&] { return stopping_ || !active(p); });
      continue;
    }
    const Clock::time_point due = next;
    lock.unlock();
    const probes::ProbeOutcome outcome = p.check->evaluate(hooks_.now_wall());
    const double t = hooks_.now_s();
    lock.lock();
    if (stopping_ || !active(p)) continue;  // the world moved on while it ran: not its window
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // a slow evaluation: no burst to catch up
    lock.unlock();
    take(p, outcome, t, due);
    lock.lock();
  }
}

// Records one outcome, decides the stop condition, then calls the hooks unlocked.
void ProbeEngine::take(Probe& p, const probes::ProbeOutcome& outcome, double t,
                       std::chrono::steady_clock::time_point due) {
  reports::ProbeTransition transition{t, outcome.ok, outcome.value, outcome.evidence};
  bool changed = false;
  std::optional<AbortDecision> decided_now;
  {
    std::lock_guard lock(mutex_);
    ++p.record.evaluations;
    if (!outcome.ok) ++p.record.failures;
    changed = !p.last_ok || *p.last_ok != outcome.ok;
    if (changed && p.record.transitions.size() < kMaxTransitions) p.record.transitions.push_back(transition);
    p.last_ok = outcome.ok;
    p.last_evidence = outcome.evidence;
    // A continuous probe that has not passed yet watches a system still starting (a server
    // not listening yet): its failures start no streak. The `before` probes judge whether
    // the system ever became steady; during and after probes begin on a running system.
    if (outcome.ok) p.passed_once = true;
    const bool starting = p.spec->mode == ProbeMode::kContinuous && !p.passed_once;
    if (outcome.ok || starting) {
      p.failing_since_due.reset();
    } else if (!p.failing_since_due) {
      p.failing_since_due = due;
    }
    if (p.aborts && !outcome.ok && !starting && !decision_ && due - *p.failing_since_due >= abort_->for_.value) {
      decision_ = AbortDecision{p.spec->name,
                                fmt::format("failed for {:.1f}s: {}",
                                            std::chrono::duration<double>(due - *p.failing_since_due).count(),
                                            outcome.evidence),
                                t};
      decided_now = decision_;
      decided_.store(true, std::memory_order_release);
    }
  }
  changed_.notify_all();  // steady_state may be waiting for a first outcome
  if (hooks_.on_result) hooks_.on_result(*p.spec, transition, changed);
  if (decided_now && hooks_.on_abort) hooks_.on_abort(*decided_now);
}

bool ProbeEngine::has_before_probes() const {
  return std::any_of(specs_.begin(), specs_.end(), [](const ProbeSpec& s) { return s.mode == ProbeMode::kBefore; });
}

bool ProbeEngine::steady_state(std::string* why) {
  std::unique_lock lock(mutex_);
  for (auto& p : probes_) {
    if (p->spec->mode != ProbeMode::kBefore) continue;
    const auto limit = std::chrono::steady_clock::now() + p->spec->timeout.value + std::chrono::seconds(1);
    changed_.wait_until(lock, limit, [&] { return stopping_ || p->last_ok.has_value(); });
    if (p->last_ok && *p->last_ok) continue;
    if (why)
      *why = p->last_ok ? fmt::format("probe {} failed before the first fault: {}", p->spec->name, p->last_evidence)
                        : fmt::format("probe {} gave no result before the first fault", p->spec->name);
    return false;
  }
  return true;
}

std::optional<AbortDecision> ProbeEngine::abort_decision() const {
  std::lock_guard lock(mutex_);
  return decision_;
}

std::vector<reports::ProbeRecord> ProbeEngine::records() const {
  std::lock_guard lock(mutex_);
  std::vector<reports::ProbeRecord> out;
  for (const auto& p : probes_) out.push_back(p->record);
  return out;
}

}  // namespace chaosbench::harness
