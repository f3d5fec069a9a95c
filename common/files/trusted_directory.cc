#include "common/files/trusted_directory.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace chaosbench::common {
namespace {

namespace fs = std::filesystem;

// A decimal id from the environment, or nullopt.
std::optional<unsigned long> id_from(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (errno != 0 || (*end != '\0' && *end != ',')) return std::nullopt;
  return v;
}

bool trusted_owner(uid_t uid) {
  if (uid == 0 || uid == ::geteuid()) return true;
  // Whoever ran sudo can act as root already: trusting their directories adds nothing.
  if (auto sudo = id_from(std::getenv("SUDO_UID")); sudo && *sudo == uid) return true;
  // Owners the person running chaosbench vouches for (a CI runner's workspace user).
  if (const char* list = std::getenv(kTrustedUidsEnv)) {
    for (const char* p = list; p != nullptr && *p != '\0';) {
      if (auto v = id_from(p); v && *v == uid) return true;
      p = std::strchr(p, ',');
      if (p != nullptr) ++p;
    }
  }
  return false;
}

std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// One directory of a chain (`dir`, reached while checking `what`): see the header.
std::string check_link_of_chain(const std::string& dir, const struct stat& st, const std::string& what) {
  if (!trusted_owner(st.st_uid))
    return fmt::format("{} lies in {}, owned by uid {}, who could replace it; choose a directory under one "
                       "that only root or you can change, or vouch for that user with {}={}",
                       what, dir, st.st_uid, kTrustedUidsEnv, st.st_uid);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    return fmt::format("{} lies in {}, which others may write (mode {:04o}); choose another directory", what, dir,
                       st.st_mode & 07777);
  return "";
}

// Every directory of `path` (absolute, lexically normal), from / down: those the literal
// path goes through, and, past a link, those of where it leads (canonical). A link itself
// cannot change; only the owner of the directory holding it can replace it.
std::string check_chain(const fs::path& path, const std::string& what) {
  std::error_code ec;
  for (const fs::path& p : {fs::absolute(path, ec).lexically_normal(), fs::canonical(path, ec)}) {
    if (ec) return fmt::format("cannot resolve {}: {}", path.string(), ec.message());
    fs::path prefix;
    for (const auto& part : p) {
      prefix /= part;
      struct stat st {};
      if (::lstat(prefix.c_str(), &st) != 0)
        return fmt::format("cannot inspect {}: {}", prefix.string(), std::strerror(errno));
      if (S_ISLNK(st.st_mode)) continue;  // judged by where it leads, in the canonical pass
      if (std::string why = check_link_of_chain(prefix.string(), st, what); !why.empty()) return why;
    }
  }
  return "";
}

std::string check_self(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return fmt::format("cannot inspect {}: {}", path, std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link; give the directory it points to", path);
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} exists and is not a directory", path);
  if (!trusted_owner(st.st_uid))
    return fmt::format("{} is owned by uid {}, not by this user (uid {}); remove it or choose another directory",
                       path, st.st_uid, ::geteuid());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fmt::format("{} is writable by {} (mode {:04o}); run chmod go-w on it or choose another directory",
                       path, (st.st_mode & S_IWOTH) ? "everyone" : "its group", st.st_mode & 07777);
  return "";
}

fs::path parent_path_of(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// Makes the missing directories above `path`, each 0755 whatever the umask.
std::string make_parents(const fs::path& parent) {
  std::error_code ec;
  if (fs::exists(parent, ec)) return "";
  if (parent.has_parent_path() && parent.parent_path() != parent)
    if (std::string why = make_parents(parent.parent_path()); !why.empty()) return why;
  if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST)
    return fmt::format("cannot create {}: {}", parent.string(), std::strerror(errno));
  ::chmod(parent.c_str(), 0755);
  return "";
}

// A directory root made for the user who ran sudo: theirs to read (group SUDO_GID,
// set-group-ID so that what is made in it is too), never to write.
void share_with_sudo_user(const std::string& path, mode_t mode) {
  auto gid = id_from(std::getenv("SUDO_GID"));
  if (!gid || ::geteuid() != 0 || ::chown(path.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(*gid)) != 0) return;
  ::chmod(path.c_str(), (mode & ~static_cast<mode_t>(S_IWGRP)) | S_ISGID);
}

}  // namespace

std::string check_trusted_directory(const std::string& path_in) {
  const std::string path = without_trailing_slashes(path_in);
  if (std::string why = check_self(path); !why.empty()) return why;
  return check_chain(parent_path_of(path), path);
}

std::string make_trusted_directory(const std::string& path_in, mode_t mode) {
  const std::string path = without_trailing_slashes(path_in);
  const fs::path parent = parent_path_of(path);
  if (std::string why = make_parents(parent); !why.empty()) return why;
  // The chain above first: only then is the name ours until the run ends.
  if (std::string why = check_chain(parent, path); !why.empty()) return why;
  if (::mkdir(path.c_str(), mode) == 0) {
    // mkdir applies the umask; the mode asked for is the mode meant.
    if (::chmod(path.c_str(), mode) != 0) return fmt::format("cannot chmod {}: {}", path, std::strerror(errno));
    share_with_sudo_user(path, mode);
  } else if (errno != EEXIST) {
    return fmt::format("cannot create {}: {}", path, std::strerror(errno));
  }
  return check_self(path);
}

}  // namespace chaosbench::common
