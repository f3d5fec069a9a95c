#include "harness/runner/run_directory.h"

#include "common/safe_files.h"
#include "common/trusted_directory.h"
#include "harness/host_error.h"
#include "harness/journal/journal.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/stat.h>
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

std::string make_run_id() { return common::random_hex(12); }

std::string RunDirectory::resolve_out(const std::string& out, const std::string& scenario_name) {
  std::string dir = out.empty() ? fmt::format("runs/{}-{}", scenario_name, utc_format("%Y%m%dT%H%M%SZ")) : out;
  std::string abs = fs::absolute(dir).lexically_normal().string();
  if (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  return abs;
}

RunDirectory::RunDirectory(const std::string& out, const std::string& run_id, Journal& journal)
    : out_(out), journal_(journal) {
  // Root writes here: a directory someone else owns or may write could redirect those
  // writes through links (see common/trusted_directory.h).
  for (const std::string& dir : {out_, out_ + "/logs"}) {
    if (std::string why = common::make_trusted_directory(dir, 0750); !why.empty())
      throw HostError(fmt::format("output directory: {}", why));
  }
  // Short, so the socket path fits sockaddr_un (108 bytes); journaled before it exists.
  runtime_ = "/tmp/chaosbench-" + run_id;
  runtime_entry_ = journal_.record_path(runtime_);
  if (::mkdir(runtime_.c_str(), 0700) != 0)
    throw HostError(fmt::format("cannot create the runtime directory {}: {}", runtime_, std::strerror(errno)));
}

RunDirectory::~RunDirectory() {
  try {
    journal_.undo(runtime_entry_);
  } catch (const std::exception&) {
    // Left in the journal for `chaosbench cleanup`.
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  if (std::string error = common::write_file_atomically(path, content, 0644); !error.empty()) throw HostError(error);
}

}  // namespace chaosbench::harness
