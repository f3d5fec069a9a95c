#include "bench/train/membership/membership.h"

#include "bench/train/membership/file_membership_backend.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(10);

std::string encode(const Membership& m) {
  return fmt::format("members {}\nsource {}\nstep {}\n", fmt::join(m.members, " "), m.source, m.step);
}

std::optional<Membership> decode(int generation, const std::string& text) {
  Membership m;
  m.generation = generation;
  std::istringstream in(text);
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    words >> word;
    if (word == "members") {
      for (int r; words >> r;) m.members.push_back(r);
    } else if (word == "source") {
      words >> m.source;
    } else if (word == "step") {
      words >> m.step;
    }
  }
  if (m.members.empty()) return std::nullopt;
  return m;
}

// Rank records ("3" holding a step): rank -> step.
std::map<int, std::int64_t> rank_steps(const std::map<int, std::string>& records) {
  std::map<int, std::int64_t> out;
  for (const auto& [rank, text] : records) {
    std::istringstream in(text);
    std::int64_t step = -1;
    in >> step;
    out[rank] = step;
  }
  return out;
}

std::string gen_name(int generation) { return fmt::format("gen-{}", generation); }

}  // namespace

int Membership::index_of(int rank) const {
  auto it = std::find(members.begin(), members.end(), rank);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

MembershipStore::MembershipStore(std::string dir, int rank, std::chrono::milliseconds settle)
    : MembershipStore(std::make_unique<FileMembershipBackend>(std::move(dir)), rank, settle) {}

MembershipStore::MembershipStore(std::unique_ptr<MembershipBackend> backend, int rank, std::chrono::milliseconds settle)
    : backend_(std::move(backend)), rank_(rank), settle_(settle) {}

std::optional<Membership> MembershipStore::read_generation(int generation) const {
  auto text = backend_->read(gen_name(generation));
  if (!text) return std::nullopt;
  return decode(generation, *text);
}

int MembershipStore::newest_generation() const {
  int g = 0;
  while (backend_->read(gen_name(g + 1))) ++g;
  return g;
}

Membership MembershipStore::propose(const Membership& proposal) {
  // The first proposal to land is the generation; later ones read it.
  auto agreed = decode(proposal.generation, backend_->write_once(gen_name(proposal.generation), encode(proposal)));
  if (!agreed) throw std::runtime_error(fmt::format("{} is unreadable", gen_name(proposal.generation)));
  return *agreed;
}

Membership MembershipStore::agree_after_failure(const Membership& current, std::int64_t step,
                                                std::chrono::milliseconds timeout) {
  const int next = current.generation + 1;
  const std::string alive = gen_name(next) + ".alive";
  backend_->write(fmt::format("{}/{}", alive, rank_), std::to_string(step));
  const auto deadline = Clock::now() + settle_ + timeout;
  auto last_change = Clock::now();
  std::size_t seen = 0;
  while (true) {
    if (auto agreed = read_generation(next)) return *agreed;  // someone else proposed
    auto ranks = rank_steps(backend_->numbered(alive));
    if (ranks.size() != seen) {
      seen = ranks.size();
      last_change = Clock::now();
    }
    const bool everyone = ranks.size() >= current.members.size();
    if (everyone || Clock::now() - last_change >= settle_ || Clock::now() >= deadline) {
      Membership p;
      p.generation = next;
      p.step = -1;
      for (const auto& [r, s] : ranks) {
        p.members.push_back(r);
        if (s > p.step) {  // ascending ranks: ties go to the lowest
          p.step = s;
          p.source = r;
        }
      }
      return propose(p);
    }
    std::this_thread::sleep_for(kPoll);
  }
}

std::optional<Membership> MembershipStore::wait_for_admission(int after, std::chrono::milliseconds timeout) {
  const std::string request = fmt::format("join/{}", rank_);
  const auto deadline = Clock::now() + timeout;
  int g = after + 1;
  while (Clock::now() < deadline && !finished()) {
    if (!backend_->read(request)) backend_->write(request, "-1");
    while (auto m = read_generation(g)) {
      if (m->index_of(rank_) >= 0) {
        backend_->remove(request);
        return m;
      }
      ++g;
    }
    std::this_thread::sleep_for(kPoll);
  }
  backend_->remove(request);
  return std::nullopt;
}

std::vector<int> MembershipStore::pending_joiners(const Membership& current) const {
  std::vector<int> out;
  for (const auto& [r, step] : rank_steps(backend_->numbered("join")))
    if (current.index_of(r) < 0) out.push_back(r);
  return out;
}

void MembershipStore::forget_joiners(const std::vector<int>& joiners) {
  for (int r : joiners) backend_->remove(fmt::format("join/{}", r));
}

Membership MembershipStore::grow(const Membership& current, const std::vector<int>& joiners, std::int64_t step) {
  Membership p;
  p.generation = current.generation + 1;
  p.members = current.members;
  p.members.insert(p.members.end(), joiners.begin(), joiners.end());
  std::sort(p.members.begin(), p.members.end());
  p.members.erase(std::unique(p.members.begin(), p.members.end()), p.members.end());
  p.source = rank_;
  p.step = step;
  return propose(p);
}

std::optional<Membership> MembershipStore::await_generation(int generation, std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (auto m = read_generation(generation)) return m;
    std::this_thread::sleep_for(kPoll);
  }
  return std::nullopt;
}

void MembershipStore::mark_finished() { backend_->write("done", ""); }

bool MembershipStore::finished() const { return backend_->read("done").has_value(); }

}  // namespace chaosbench::bench::train
