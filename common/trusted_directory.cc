#include "common/trusted_directory.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace chaosbench::common {
namespace {

namespace fs = std::filesystem;

bool trusted_owner(uid_t uid) {
  if (uid == 0 || uid == ::geteuid()) return true;
  // Whoever ran sudo can act as root already: trusting their directories adds nothing.
  const char* sudo = std::getenv("SUDO_UID");
  if (sudo == nullptr || *sudo == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(sudo, &end, 10);
  return errno == 0 && *end == '\0' && v == uid;
}

std::string check_self(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return fmt::format("cannot inspect {}: {}", path, std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link; give the directory it points to", path);
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} exists and is not a directory", path);
  if (st.st_uid != ::geteuid())
    return fmt::format("{} is owned by uid {}, not by this user (uid {}); remove it or choose another directory",
                       path, st.st_uid, ::geteuid());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fmt::format("{} is writable by {} (mode {:04o}); run chmod go-w on it or choose another directory",
                       path, (st.st_mode & S_IWOTH) ? "everyone" : "its group", st.st_mode & 07777);
  return "";
}

// `dir` and every directory above it: see make_trusted_directory. `what` is the path
// the caller asked about, for the message.
std::string check_chain(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  const fs::path real = fs::canonical(dir, ec);
  if (ec) return fmt::format("cannot resolve {}: {}", dir.string(), ec.message());
  for (fs::path p = real;; p = p.parent_path()) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return fmt::format("cannot inspect {}: {}", p.string(), std::strerror(errno));
    if (!trusted_owner(st.st_uid))
      return fmt::format("{} lies in {}, owned by uid {}, who could replace it; choose a directory under one "
                         "that only root or you can change", what, p.string(), st.st_uid);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
      return fmt::format("{} lies in {}, which others may write (mode {:04o}); choose another directory", what,
                         p.string(), st.st_mode & 07777);
    if (p == p.parent_path()) break;
  }
  return "";
}

fs::path parent_of(const std::string& path) {
  std::string s = path;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  fs::path parent = fs::path(s).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

std::string check_trusted_directory(const std::string& path) {
  if (std::string why = check_self(path); !why.empty()) return why;
  return check_chain(parent_of(path), path);
}

std::string make_trusted_directory(const std::string& path, mode_t mode) {
  const fs::path parent = parent_of(path);
  std::error_code ec;
  if (!fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) return fmt::format("cannot create {}: {}", parent.string(), ec.message());
  }
  // The chain above first: only then is the name ours until the run ends.
  if (std::string why = check_chain(parent, path); !why.empty()) return why;
  if (::mkdir(path.c_str(), mode) == 0) {
    // mkdir applies the umask; the mode asked for is the mode meant.
    if (::chmod(path.c_str(), mode) != 0) return fmt::format("cannot chmod {}: {}", path, std::strerror(errno));
  } else if (errno != EEXIST) {
    return fmt::format("cannot create {}: {}", path, std::strerror(errno));
  }
  return check_self(path);
}

}  // namespace chaosbench::common
