// The places a run writes: the output directory (results, timeline, logs/) that stays,
// and a private runtime directory /tmp/chaosbench-<run id> (metrics socket, rendezvous
// store) that is journaled before it is made and removed when the run ends.
#pragma once

#include <cstdint>
#include <string>

namespace chaosbench::harness {

class Journal;

class RunDirectory {
 public:
  // `out`, made absolute, or runs/<name>-<UTC timestamp> when empty. Creates nothing.
  static std::string resolve_out(const std::string& out, const std::string& scenario_name);

  // Creates `out` (mode 0750; missing parents 0755) with logs/ in it, or accepts an
  // existing one only if it is trusted (common/files/trusted_directory.h); then journals and
  // creates the runtime directory. Throws HostError (exit 3) naming the path on failure.
  RunDirectory(const std::string& out, const std::string& run_id, Journal& journal);
  ~RunDirectory();  // removes the runtime directory through the journal
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& out() const { return out_; }          // absolute
  const std::string& runtime() const { return runtime_; }  // absolute, private (0700)

 private:
  std::string out_;
  std::string runtime_;
  Journal& journal_;
  std::uint64_t runtime_entry_ = 0;
};

}  // namespace chaosbench::harness
