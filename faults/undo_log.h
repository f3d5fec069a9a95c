// Where a fault records what undoing it takes, before it acts: the run's journal
// implements this (harness/journal), so `chaosbench cleanup` can revert a fault whose
// harness died. Faults only see this interface.
//
// Undo kinds faults use (the journal knows how to carry each out):
//   "write"         {path, value}: write value into path (a cgroup or sysfs file); a
//                   missing file is success (the cgroup is gone)
//   "signal_group"  {pgid, start_time, signal}: send signal to that process group if it
//                   is still the same one (SIGCONT after a SIGSTOP pause)
//   "tc_root"       {netns, netns_cookie, interface, handle}: delete the htb root a tc
//                   shaper made (network faults; see faults/network/network_plane.h)
//   "iptables_chain" {netns, netns_cookie, chain, hook}: remove a chain of ours and the
//                   jump to it
//   "fault_control" {path, slot}: disarm that slot of a rank's GPU fault control block
//                   (common/gpu/control_block.h)
// A namespace that is gone takes these with it: that is success.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace chaosbench::faults {

class UndoLog {
 public:
  virtual ~UndoLog() = default;
  // Durable when it returns. Throws when it cannot record: then the fault must not act.
  virtual std::uint64_t record(const std::string& kind, std::map<std::string, std::string> fields) = 0;
  // The entry is undone (by the fault itself).
  virtual void done(std::uint64_t id) = 0;
};

// For tests and dry runs: remembers nothing.
class NullUndoLog final : public UndoLog {
 public:
  std::uint64_t record(const std::string&, std::map<std::string, std::string>) override { return ++n_; }
  void done(std::uint64_t) override {}

 private:
  std::uint64_t n_ = 0;
};

}  // namespace chaosbench::faults
