#include "bench/train/membership/membership_backend.h"

#include "bench/rendezvous/rendezvous.h"
#include "bench/train/membership/file_membership_backend.h"
#include "bench/train/membership/store_membership_backend.h"

namespace chaosbench::bench::train {

std::unique_ptr<MembershipBackend> open_membership_backend(const std::string& store_spec, const std::string& name) {
  const StoreSpec spec = parse_store_spec(store_spec);
  if (spec.tcp()) return std::make_unique<StoreMembershipBackend>(connect_tcp_store(spec), name);
  return std::make_unique<FileMembershipBackend>(spec.dir + "/" + name);
}

}  // namespace chaosbench::bench::train
