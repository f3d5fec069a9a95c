#include "bench/rendezvous/rendezvous.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <gloo/common/error.h>
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

// gloo's store interface over the controller's store. A get or wait that times out
// throws gloo::IoException, as gloo's FileStore does.
class TcpGlooStore final : public gloo::rendezvous::Store {
 public:
  explicit TcpGlooStore(std::shared_ptr<TcpStoreClient> client) : client_(std::move(client)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    client_->set(key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    auto value = client_->get(key, kDefaultTimeout);
    if (!value) throw gloo::IoException(fmt::format("rendezvous store: key \"{}\" did not appear in time", key));
    return std::vector<char>(value->begin(), value->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, kDefaultTimeout); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    if (!client_->wait(keys, timeout))
      throw gloo::IoException(fmt::format("rendezvous store: {} keys did not all appear in time", keys.size()));
  }

 private:
  std::shared_ptr<TcpStoreClient> client_;
};

class TcpRendezvousStore final : public RendezvousStore {
 public:
  TcpRendezvousStore(std::string spec, std::shared_ptr<TcpStoreClient> client, const std::string& prefix)
      : spec_(std::move(spec)), tcp_(std::move(client)), prefixed_(prefix, tcp_) {}

  gloo::rendezvous::Store& store() override { return prefixed_; }
  const std::string& spec() const override { return spec_; }

 private:
  std::string spec_;
  TcpGlooStore tcp_;  // before prefixed_, which references it
  gloo::rendezvous::PrefixStore prefixed_;
};

}  // namespace

StoreSpec parse_store_spec(const std::string& spec) {
  constexpr std::string_view kFile = "file:", kTcp = "tcp:";
  StoreSpec out;
  if (std::string_view(spec).starts_with(kTcp)) {
    const std::string rest = spec.substr(kTcp.size());
    const auto colon = rest.rfind(':');
    int port = 0;
    const char* end = rest.data() + rest.size();
    if (colon == std::string::npos || colon == 0 ||
        std::from_chars(rest.data() + colon + 1, end, port).ptr != end || port < 1 || port > 65535)
      throw std::invalid_argument(fmt::format("store \"{}\": \"tcp:\" needs a host and a port, e.g. \"tcp:10.0.0.1:4000\"", spec));
    out.host = rest.substr(0, colon);
    out.port = port;
    return out;
  }
  if (!std::string_view(spec).starts_with(kFile))
    throw std::invalid_argument(fmt::format(
        "store \"{}\": unknown scheme (supported: \"file:/dir\", a gloo FileStore directory, and \"tcp:HOST:PORT\", "
        "the controller's store)", spec));
  out.dir = spec.substr(kFile.size());
  if (out.dir.empty())
    throw std::invalid_argument(fmt::format("store \"{}\": \"file:\" needs a directory, e.g. \"file:/tmp/run1\"", spec));
  return out;
}

std::string store_directory(const std::string& spec) {
  StoreSpec parsed = parse_store_spec(spec);
  if (parsed.tcp()) throw std::invalid_argument(fmt::format("store \"{}\" has no directory", spec));
  return parsed.dir;
}

std::shared_ptr<TcpStoreClient> connect_tcp_store(const StoreSpec& spec) {
  const char* token = std::getenv(common::store_wire::kTokenEnv);
  if (!token || !*token)
    throw std::runtime_error(fmt::format("rendezvous store {}:{}: {} is not set", spec.host, spec.port,
                                         common::store_wire::kTokenEnv));
  return std::make_shared<TcpStoreClient>(spec.host, spec.port, token);
}

std::unique_ptr<RendezvousStore> make_store(const std::string& spec, const std::string& prefix) {
  const StoreSpec parsed = parse_store_spec(spec);
  if (parsed.tcp()) return std::make_unique<TcpRendezvousStore>(spec, connect_tcp_store(parsed), prefix);
  // Every rank may race to create it; an existing directory is success.
  std::error_code ec;
  std::filesystem::create_directories(parsed.dir, ec);
  if (ec && !std::filesystem::is_directory(parsed.dir)) {
    throw std::runtime_error(fmt::format("store \"{}\": cannot create directory: {}", spec, ec.message()));
  }
  return std::make_unique<FileRendezvousStore>(spec, parsed.dir, prefix);
}

}  // namespace chaosbench::bench
