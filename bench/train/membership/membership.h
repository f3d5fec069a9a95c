// Elastic membership: how the ranks of an elastic job agree, through records in the
// rendezvous store (files in its directory, or keys in the controller's store:
// membership_backend.h), on who trains together in each generation.
//
//   gen-<g>            the members of generation g (original ranks), the source rank
//                      whose state everyone takes, and its step; written once, so
//                      exactly one proposal wins and a reader never sees half a record
//   gen-<g>.alive/<r>  rank r survived generation g-1 and holds state at step s
//   join/<r>           rank r came back and waits to be admitted (it registers again
//                      while waiting, should the leader have dropped the request)
//   done               the members finished training: nobody waits any more
// Generation 0 has no file: every rank started together.
//
// After a collective failure in generation g, each survivor announces itself for g+1,
// waits until every rank of g has announced or no new one came for `settle`, and then
// proposes the ranks it saw; the first proposal is the generation. The source is the
// member with the highest step, so a rank that completed one more step than the others
// (its last allreduce finished before the peer died) hands that step on instead of it
// being lost. A survivor too slow to be listed joins like a returning rank.
// A returning rank registers in join/ and waits; the leader (lowest member) sees it at a
// step boundary, and after that step writes generation g+1 with it added.
//
// Records stay until the run's runtime directory is removed (or the controller's store
// stops with the run).
// Threads: one object per rank, used from its compute thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/train/membership/membership_backend.h"

namespace chaosbench::bench::train {

struct Membership {
  int generation = 0;
  std::vector<int> members;  // original ranks, ascending
  int source = 0;            // the rank whose state every member takes
  std::int64_t step = 0;     // the source's step

  int leader() const { return members.front(); }
  // This rank's index in the generation's gloo context, or -1 when not a member.
  int index_of(int rank) const;
};

class MembershipStore {
 public:
  // Files in `dir`. Throws std::runtime_error when the directory cannot be created.
  MembershipStore(std::string dir, int rank, std::chrono::milliseconds settle);
  MembershipStore(std::unique_ptr<MembershipBackend> backend, int rank, std::chrono::milliseconds settle);

  // The newest generation with a file, 0 when none.
  int newest_generation() const;
  // Survivor of a failure in `current`: announce, settle, agree. Blocks up to settle
  // plus `timeout` (every rank of `current` announced, or quiet for settle).
  Membership agree_after_failure(const Membership& current, std::int64_t step, std::chrono::milliseconds timeout);
  // Returning rank: registers and blocks until a generation newer than `after` lists it
  // (nullopt after `timeout`, or at once when training finished()).
  std::optional<Membership> wait_for_admission(int after, std::chrono::milliseconds timeout);
  // Leader, at a step boundary: ranks waiting in join/ that are not members. Cheap (one
  // directory read, or one round trip).
  std::vector<int> pending_joiners(const Membership& current) const;
  // Leader: the admission of these joiners failed (one died while waiting): their
  // requests go; a joiner still alive registers again.
  void forget_joiners(const std::vector<int>& joiners);
  // Leader: writes generation current+1 = members + joiners, source = the leader.
  Membership grow(const Membership& current, const std::vector<int>& joiners, std::int64_t step);
  // Others: block until generation g's file exists (nullopt after `timeout`).
  std::optional<Membership> await_generation(int generation, std::chrono::milliseconds timeout) const;
  // The leader, at the end: training is over.
  void mark_finished();
  bool finished() const;

 private:
  std::optional<Membership> read_generation(int generation) const;
  Membership propose(const Membership& proposal);  // write_once: the first proposal wins

  std::unique_ptr<MembershipBackend> backend_;
  int rank_;
  std::chrono::milliseconds settle_;
};

}  // namespace chaosbench::bench::train
