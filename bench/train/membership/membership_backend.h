// Where the elastic membership keeps its records (membership.h): named texts, some in
// folders ("gen-2", "gen-2.alive/3", "join/1", "done"). Files in a directory the ranks
// share (a "file:" store), or keys in the controller's store (a "tcp:" store) when the
// ranks' hosts share no filesystem. Both give the same guarantees: a reader never sees
// half a record, and of several write_once calls on one name exactly one wins.
// Threads: one object per rank, used from its compute thread. Every method may block on
// I/O (a disk, or one round trip to the controller) and throws std::runtime_error when
// the record cannot be read or written.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace chaosbench::bench::train {

class MembershipBackend {
 public:
  virtual ~MembershipBackend() = default;
  // The record's text; nullopt when there is none.
  virtual std::optional<std::string> read(const std::string& name) const = 0;
  // Creates or replaces the record whole.
  virtual void write(const std::string& name, const std::string& text) = 0;
  // Creates the record unless it exists; returns the text it holds after (the winner's).
  virtual std::string write_once(const std::string& name, const std::string& text) = 0;
  // No record is fine.
  virtual void remove(const std::string& name) = 0;
  // The records in `folder` whose names are decimal numbers (a rank), by name.
  virtual std::map<int, std::string> numbered(const std::string& folder) const = 0;
};

// The backend for the ranks' store spec: files in `<dir>/<name>` for "file:<dir>", keys
// under "<name>/" for "tcp:HOST:PORT". Throws std::invalid_argument for a bad spec and
// std::runtime_error when the directory or the connection cannot be had.
std::unique_ptr<MembershipBackend> open_membership_backend(const std::string& store_spec, const std::string& name);

}  // namespace chaosbench::bench::train
