#include "harness/runner/run_directory.h"

#include "harness/host_error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <unistd.h>

namespace chaosbench::harness {
namespace fs = std::filesystem;

namespace {

std::string utc_format(const char* format) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), format, &tm);
  return buf;
}

}  // namespace

std::string utc_timestamp_iso() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }

RunDirectory::RunDirectory(const std::string& out, const std::string& scenario_name) {
  std::string dir = out.empty() ? fmt::format("runs/{}-{}", scenario_name, utc_format("%Y%m%dT%H%M%SZ")) : out;
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "logs", ec);
  if (ec) throw HostError(fmt::format("cannot create the output directory {}: {}", dir, ec.message()));
  out_ = fs::absolute(dir).lexically_normal().string();
  if (out_.size() > 1 && out_.back() == '/') out_.pop_back();
  // The socket path must fit sockaddr_un (108 bytes): keep the runtime directory short.
  std::string tmpl = "/tmp/chaosbench-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    throw HostError(fmt::format("cannot create a runtime directory in /tmp: {}", std::strerror(errno)));
  runtime_ = tmpl;
  run_id_ = fmt::format("{}-{}", fs::path(runtime_).filename().string(), ::getpid());
}

RunDirectory::~RunDirectory() {
  std::error_code ec;
  fs::remove_all(runtime_, ec);
}

void RunDirectory::write_file(const std::string& name, const std::string& content) const {
  std::string path = out_ + "/" + name;
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw HostError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      throw HostError(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw HostError(fmt::format("cannot rename {} to {}: {}", tmp, path, std::strerror(errno)));
}

}  // namespace chaosbench::harness
