#include "harness/journal/journal_directory.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace chaosbench::harness {

std::string choose_journal_directory(uid_t euid, const char* env_dir, const char* xdg) {
  if (env_dir && *env_dir) return env_dir;
  if (euid == 0) return "/run/chaosbench";
  struct stat st {};
  if (xdg && *xdg == '/' && ::lstat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == euid &&
      (st.st_mode & 07777) == 0700)
    return std::string(xdg) + "/chaosbench";
  return fmt::format("/tmp/chaosbench-journal-{}", euid);
}

std::string prepare_journal_directory(const std::string& dir) {
  std::error_code ec;
  const auto parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fmt::format("cannot create the journal directory {}: {}", dir, std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    return fmt::format("cannot inspect the journal directory {}: {}", dir, std::strerror(errno));
  const char* fix = "remove it (someone else may have made it) or set CHAOSBENCH_JOURNAL_DIR to a directory of yours";
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
    return fmt::format("the journal directory {} is not a directory but a link or a file; {}", dir, fix);
  if (st.st_uid != ::geteuid())
    return fmt::format("the journal directory {} is owned by uid {}, not by this user (uid {}); {}", dir, st.st_uid,
                       ::geteuid(), fix);
  // mkdir applied the umask; ours with exactly the owner's bits is what is meant.
  if ((st.st_mode & 07777) != 0700 && (st.st_mode & 077) == 0) ::chmod(dir.c_str(), 0700);
  if ((st.st_mode & 077) != 0)
    return fmt::format("the journal directory {} has mode {:04o}, so others could read or plant journals in it; "
                       "chmod 700 it after checking its contents, or {}", dir, st.st_mode & 07777, fix);
  return "";
}

}  // namespace chaosbench::harness
