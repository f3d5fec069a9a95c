// Membership records as files in a directory the ranks share: written atomically
// (rename), write_once by link(2). See membership_backend.h.
#pragma once

#include "bench/train/membership/membership_backend.h"

namespace chaosbench::bench::train {

class FileMembershipBackend final : public MembershipBackend {
 public:
  // Throws std::runtime_error when the directory cannot be created.
  explicit FileMembershipBackend(std::string dir);

  std::optional<std::string> read(const std::string& name) const override;
  void write(const std::string& name, const std::string& text) override;
  std::string write_once(const std::string& name, const std::string& text) override;
  void remove(const std::string& name) override;
  std::map<int, std::string> numbered(const std::string& folder) const override;

 private:
  std::string dir_;
};

}  // namespace chaosbench::bench::train
