// Membership records as keys in the controller's store ("tcp:" stores, for hosts that
// share no filesystem): record "join/3" is key "<name>/join/3"; write_once is the
// store's add-once, so the first proposal wins there as link(2) makes it win in files.
// See membership_backend.h.
#pragma once

#include <memory>

#include "bench/rendezvous/tcp_store_client.h"
#include "bench/train/membership/membership_backend.h"

namespace chaosbench::bench::train {

class StoreMembershipBackend final : public MembershipBackend {
 public:
  StoreMembershipBackend(std::shared_ptr<TcpStoreClient> client, std::string name);

  std::optional<std::string> read(const std::string& name) const override;
  void write(const std::string& name, const std::string& text) override;
  std::string write_once(const std::string& name, const std::string& text) override;
  void remove(const std::string& name) override;
  std::map<int, std::string> numbered(const std::string& folder) const override;

 private:
  std::shared_ptr<TcpStoreClient> client_;
  std::string prefix_;  // "<name>/"
};

}  // namespace chaosbench::bench::train
