#include "harness/run/run_directory.h"

#include "common/files/trusted_directory.h"
#include "harness/core/host_error.h"
#include "harness/core/run_stamps.h"
#include "harness/journal/journal.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>

namespace chaosbench::harness {
namespace fs = std::filesystem;

std::string RunDirectory::resolve_out(const std::string& out, const std::string& scenario_name) {
  std::string dir = out.empty() ? fmt::format("runs/{}-{}", scenario_name, utc_timestamp_compact()) : out;
  std::string abs = fs::absolute(dir).lexically_normal().string();
  if (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  return abs;
}

RunDirectory::RunDirectory(const std::string& out, const std::string& run_id, Journal& journal)
    : out_(out), journal_(journal) {
  // Root writes here: a directory someone else owns or may write could redirect those
  // writes through links (see common/files/trusted_directory.h).
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

}  // namespace chaosbench::harness
