// The places a run writes: the output directory (results, timeline, logs/) that stays,
// and a private runtime directory under /tmp (metrics socket, rendezvous store) that is
// removed when the run ends.
#pragma once

#include <string>

namespace chaosbench::harness {

class RunDirectory {
 public:
  // Creates `out` (and parents) or runs/<name>-<UTC timestamp> when empty, logs/ in it,
  // and the runtime directory. Throws HostError (exit 3) naming the path on failure.
  RunDirectory(const std::string& out, const std::string& scenario_name);
  ~RunDirectory();  // removes the runtime directory
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::string& out() const { return out_; }          // absolute
  const std::string& runtime() const { return runtime_; }  // absolute, private (0700)
  const std::string& run_id() const { return run_id_; }    // unique per run

  // Writes `content` to out()/name atomically (temp file, fsync, rename).
  void write_file(const std::string& name, const std::string& content) const;

 private:
  std::string out_;
  std::string runtime_;
  std::string run_id_;
};

// "2026-11-29T21:00:00Z"
std::string utc_timestamp_iso();

}  // namespace chaosbench::harness
