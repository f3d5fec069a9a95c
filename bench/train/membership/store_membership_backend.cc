#include "bench/train/membership/store_membership_backend.h"

#include <algorithm>
#include <cctype>
#include <chrono>


namespace chaosbench::bench::train {

StoreMembershipBackend::StoreMembershipBackend(std::shared_ptr<TcpStoreClient> client, std::string name)
    : client_(std::move(client)), prefix_(std::move(name) + "/") {}

std::optional<std::string> StoreMembershipBackend::read(const std::string& name) const {
  return client_->get(prefix_ + name, std::chrono::milliseconds(0));
}

void StoreMembershipBackend::write(const std::string& name, const std::string& text) { client_->set(prefix_ + name, text); }

std::string StoreMembershipBackend::write_once(const std::string& name, const std::string& text) {
  return client_->add_once(prefix_ + name, text);
}

void StoreMembershipBackend::remove(const std::string& name) { client_->remove(prefix_ + name); }

std::map<int, std::string> StoreMembershipBackend::numbered(const std::string& folder) const {
  const std::string under = prefix_ + folder + "/";
  std::map<int, std::string> out;
  for (const auto& [key, text] : client_->list(under)) {
    const std::string name = key.substr(under.size());
    if (!name.empty() && name.size() < 10 && std::all_of(name.begin(), name.end(), ::isdigit))
      out[std::stoi(name)] = text;
  }
  return out;
}

}  // namespace chaosbench::bench::train
