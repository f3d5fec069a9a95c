// Where the ranks of a gloo job meet: turns a store spec ("file:/dir") into a live gloo
// rendezvous store. An interface so that other schemes (a TCP store) can be added without
// touching the benchmark; knows nothing about collectives or metrics.
#pragma once

#include <memory>
#include <string>

#include <gloo/rendezvous/store.h>

namespace chaosbench::bench {

// Owns every object behind one rendezvous store. gloo's PrefixStore only references its
// backing store, so both must live exactly as long as each other.
class RendezvousStore {
 public:
  virtual ~RendezvousStore() = default;
  // The store to hand to gloo (connectFullMesh); valid for this object's lifetime.
  // Not thread-safe beyond what the gloo store itself guarantees.
  virtual gloo::rendezvous::Store& store() = 0;
  // The spec it was made from, for messages ("file:/tmp/run1").
  virtual const std::string& spec() const = 0;
};

// "file:/dir" gives a gloo FileStore in /dir (created if missing) wrapped in a PrefixStore
// with `prefix`, so runs and restarts sharing a directory never see each other's keys.
// Throws std::invalid_argument for an unknown scheme or an empty path, and
// std::runtime_error when the directory cannot be created.
std::unique_ptr<RendezvousStore> make_store(const std::string& spec, const std::string& prefix);

// The directory of a "file:/dir" spec, for what else ranks share there (the trainer's
// elastic membership files). Throws std::invalid_argument as make_store does.
std::string store_directory(const std::string& spec);

}  // namespace chaosbench::bench
