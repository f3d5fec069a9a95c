#include "bench/train/membership.h"

#include "common/safe_files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

namespace chaosbench::bench::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(10);

void write_atomically(const std::string& path, const std::string& text) {
  if (std::string error = common::write_file_atomically(path, text); !error.empty()) throw std::runtime_error(error);
}

std::string encode(const Membership& m) {
  return fmt::format("members {}\nsource {}\nstep {}\n", fmt::join(m.members, " "), m.source, m.step);
}

// Rank files in `dir` ("3" holding a step): rank -> step.
std::map<int, std::int64_t> read_rank_files(const std::string& dir) {
  std::map<int, std::int64_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;  // temporaries
    std::ifstream in(e.path());
    std::int64_t step = -1;
    in >> step;
    out[std::stoi(name)] = step;
  }
  return out;
}

}  // namespace

int Membership::index_of(int rank) const {
  auto it = std::find(members.begin(), members.end(), rank);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

MembershipStore::MembershipStore(std::string dir, int rank, std::chrono::milliseconds settle)
    : dir_(std::move(dir)), rank_(rank), settle_(settle) {
  std::error_code ec;
  fs::create_directories(dir_ + "/join", ec);
  if (!fs::is_directory(dir_ + "/join"))
    throw std::runtime_error(fmt::format("cannot create {}/join: {}", dir_, ec.message()));
}

std::optional<Membership> MembershipStore::read_generation(int generation) const {
  std::ifstream in(fmt::format("{}/gen-{}", dir_, generation));
  if (!in) return std::nullopt;
  Membership m;
  m.generation = generation;
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

int MembershipStore::newest_generation() const {
  int g = 0;
  while (fs::exists(fmt::format("{}/gen-{}", dir_, g + 1))) ++g;
  return g;
}

Membership MembershipStore::propose(const Membership& proposal) {
  const std::string path = fmt::format("{}/gen-{}", dir_, proposal.generation);
  // The first proposal to land is the generation; later ones read it.
  if (std::string error = common::write_file_once(path, encode(proposal)); !error.empty() && error != "EEXIST")
    throw std::runtime_error(error);
  auto agreed = read_generation(proposal.generation);
  if (!agreed) throw std::runtime_error(fmt::format("{} is unreadable", path));
  return *agreed;
}

Membership MembershipStore::agree_after_failure(const Membership& current, std::int64_t step,
                                                std::chrono::milliseconds timeout) {
  const int next = current.generation + 1;
  const std::string alive = fmt::format("{}/gen-{}.alive", dir_, next);
  fs::create_directories(alive);
  write_atomically(fmt::format("{}/{}", alive, rank_), std::to_string(step));
  const auto deadline = Clock::now() + settle_ + timeout;
  auto last_change = Clock::now();
  std::size_t seen = 0;
  while (true) {
    if (auto agreed = read_generation(next)) return *agreed;  // someone else proposed
    auto ranks = read_rank_files(alive);
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
  const std::string request = fmt::format("{}/join/{}", dir_, rank_);
  const auto deadline = Clock::now() + timeout;
  int g = after + 1;
  while (Clock::now() < deadline && !finished()) {
    if (!fs::exists(request)) write_atomically(request, "-1");
    while (auto m = read_generation(g)) {
      if (m->index_of(rank_) >= 0) {
        fs::remove(fmt::format("{}/join/{}", dir_, rank_));
        return m;
      }
      ++g;
    }
    std::this_thread::sleep_for(kPoll);
  }
  fs::remove(fmt::format("{}/join/{}", dir_, rank_));
  return std::nullopt;
}

std::vector<int> MembershipStore::pending_joiners(const Membership& current) const {
  std::vector<int> out;
  for (const auto& [r, step] : read_rank_files(dir_ + "/join"))
    if (current.index_of(r) < 0) out.push_back(r);
  return out;
}

void MembershipStore::forget_joiners(const std::vector<int>& joiners) {
  for (int r : joiners) {
    std::error_code ec;
    fs::remove(fmt::format("{}/join/{}", dir_, r), ec);
  }
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

void MembershipStore::mark_finished() { write_atomically(dir_ + "/done", ""); }

bool MembershipStore::finished() const { return fs::exists(dir_ + "/done"); }

}  // namespace chaosbench::bench::train
