// Where the ranks of a gloo job meet: turns a store spec ("file:/dir", or "tcp:HOST:PORT",
// the controller's store in cluster modes with agents) into a live gloo rendezvous store.
// Knows nothing about collectives or metrics.
#pragma once

#include <memory>
#include <string>

#include "bench/rendezvous/tcp_store_client.h"

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

// A parsed spec: a directory, or a host and port.
struct StoreSpec {
  std::string dir;   // "file:/dir"
  std::string host;  // "tcp:HOST:PORT"
  int port = 0;
  bool tcp() const { return !host.empty(); }
};

// Throws std::invalid_argument for an unknown scheme, an empty path, or a tcp spec
// without a host or a port in 1..65535.
StoreSpec parse_store_spec(const std::string& spec);

// A "tcp:HOST:PORT" store's connection, authenticated with the token in
// CHAOSBENCH_STORE_TOKEN. Throws std::runtime_error (no token, no connection, refused).
std::shared_ptr<TcpStoreClient> connect_tcp_store(const StoreSpec& spec);

// "file:/dir" gives a gloo FileStore in /dir (created if missing) wrapped in a PrefixStore
// with `prefix`, so runs and restarts sharing a directory never see each other's keys;
// "tcp:HOST:PORT" the same over the controller's store (gets and waits time out after
// gloo's default 30 s). Throws std::invalid_argument as parse_store_spec does, and
// std::runtime_error when the directory cannot be created or the store not reached.
std::unique_ptr<RendezvousStore> make_store(const std::string& spec, const std::string& prefix);

// The directory of a "file:/dir" spec, for what else ranks share there (the trainer's
// elastic membership files). Throws std::invalid_argument as make_store does, and for a
// tcp spec (which has no directory).
std::string store_directory(const std::string& spec);

}  // namespace chaosbench::bench
