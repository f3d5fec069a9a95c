// The host cannot do what was asked: a directory that cannot be created, a missing
// capability or permission. The CLI turns it into exit code 3 (README.md "Exit codes").
#pragma once

#include <stdexcept>
#include <string>

namespace chaosbench::harness {

class HostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// common::write_file_atomically (mode 0644, as reports), throwing HostError on failure.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace chaosbench::harness
