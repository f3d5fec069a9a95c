#include "bench/collective/rendezvous.h"

#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>

namespace chaosbench::bench {
namespace {

class FileRendezvousStore final : public RendezvousStore {
 public:
  FileRendezvousStore(std::string spec, const std::string& dir, const std::string& prefix)
      : spec_(std::move(spec)), file_(dir), prefixed_(prefix, file_) {}

  gloo::rendezvous::Store& store() override { return prefixed_; }
  const std::string& spec() const override { return spec_; }

 private:
  std::string spec_;
  // Declaration order matters: prefixed_ holds a reference to file_.
  gloo::rendezvous::FileStore file_;
  gloo::rendezvous::PrefixStore prefixed_;
};

}  // namespace

std::string store_directory(const std::string& spec) {
  constexpr std::string_view kFile = "file:";
  if (!std::string_view(spec).starts_with(kFile))
    throw std::invalid_argument(fmt::format(
        "store \"{}\": unknown scheme (supported: \"file:/dir\", a gloo FileStore directory)", spec));
  std::string dir = spec.substr(kFile.size());
  if (dir.empty())
    throw std::invalid_argument(fmt::format("store \"{}\": \"file:\" needs a directory, e.g. \"file:/tmp/run1\"", spec));
  return dir;
}

std::unique_ptr<RendezvousStore> make_store(const std::string& spec, const std::string& prefix) {
  const std::string dir = store_directory(spec);
  // Every rank may race to create it; an existing directory is success.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec && !std::filesystem::is_directory(dir)) {
    throw std::runtime_error(fmt::format("store \"{}\": cannot create directory: {}", spec, ec.message()));
  }
  return std::make_unique<FileRendezvousStore>(spec, dir, prefix);
}

}  // namespace chaosbench::bench
