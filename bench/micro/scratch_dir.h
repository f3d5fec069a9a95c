// A fresh, uniquely named directory (mkdtemp) that is removed with its contents when the
// object goes: the micro-benchmarks' rendezvous stores, sockets and checkpoint files.
// Only the directory this object made is removed, never anything found by name.
#pragma once

#include <string>

namespace chaosbench::bench::micro {

class ScratchDir {
 public:
  // Makes `parent` (and its parents) if missing, then parent/<prefix>XXXXXX.
  // Throws std::runtime_error naming the path on failure.
  ScratchDir(const std::string& parent, const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace chaosbench::bench::micro
