#include "reports/history/history_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

#include "common/files/safe_files.h"

namespace chaosbench::reports {
namespace {

std::runtime_error failure(const std::string& what, const std::string& path, int err) {
  return std::runtime_error(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
}

void lock(int fd, int how, const std::string& path) {
  while (::flock(fd, how) != 0)
    if (errno != EINTR) throw failure("cannot lock", path, errno);
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

std::optional<HistoryFile> HistoryFile::open_for_reading(const std::string& path) {
  const int fd = common::open_regular_file(path, /*no_follow=*/true);
  if (fd == -ENOENT) return std::nullopt;
  if (fd == -EINVAL) throw std::runtime_error(fmt::format("{}: not a regular file", path));
  if (fd < 0) throw failure("cannot open", path, -fd);
  HistoryFile file(path, common::UniqueFd(fd));
  lock(fd, LOCK_SH, path);
  file.load(false);
  return file;
}

HistoryFile HistoryFile::open_for_append(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create its directory: {}", path, ec.message()));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw failure("cannot open", path, errno);
  HistoryFile file(path, common::UniqueFd(fd));
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw failure("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(fmt::format("{}: not a regular file", path));
  file.writable_ = true;
  lock(fd, LOCK_EX, path);
  file.load(true);
  return file;
}

const HistoryEntry* HistoryFile::find(const std::string& run_id) const {
  for (const auto& e : entries_)
    if (e.run_id == run_id) return &e;
  return nullptr;
}

void HistoryFile::load(bool repair) {
  std::string text;
  if (int err = common::read_open_file(fd_.get(), text, kMaxHistoryBytes); err != 0) {
    if (err == EFBIG) throw std::runtime_error(fmt::format("{}: larger than {} bytes", path_, kMaxHistoryBytes));
    throw failure("cannot read", path_, err);
  }
  std::unordered_map<std::string, std::size_t> seen;  // run_id -> line
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    const std::size_t nl = text.find('\n', pos);
    const bool terminated = nl != std::string::npos;
    const std::string line = text.substr(pos, terminated ? nl - pos : std::string::npos);
    const std::size_t next = terminated ? nl + 1 : text.size();
    if (blank(line)) {
      if (terminated) {
        end_ = static_cast<off_t>(next);
        lines_ = line_no;
      }
      pos = next;
      continue;
    }
    HistoryEntry entry;
    try {
      entry = parse_history_line(line);
    } catch (const std::exception& e) {
      if (terminated) throw std::runtime_error(fmt::format("{}:{}: {}", path_, line_no, e.what()));
      // Torn by an add that did not finish: what it held was never added.
      notes_.push_back(fmt::format("{}:{}: an incomplete last line (an add that was interrupted?) is {}", path_,
                                   line_no, repair ? "cut off" : "ignored"));
      break;
    }
    if (auto [it, fresh] = seen.emplace(entry.run_id, line_no); !fresh)
      throw std::runtime_error(
          fmt::format("{}:{}: run_id {} is already at line {}", path_, line_no, entry.run_id, it->second));
    entry.line = line_no;
    entries_.push_back(std::move(entry));
    end_ = static_cast<off_t>(next);
    lines_ = line_no;
    needs_newline_ = !terminated;
    pos = next;
  }
  if (repair && static_cast<std::size_t>(end_) < text.size() && ::ftruncate(fd_.get(), end_) != 0)
    throw failure("cannot cut off the incomplete last line", path_, errno);
}

void HistoryFile::append(const std::vector<HistoryEntry>& entries) {
  if (!writable_) throw std::runtime_error(fmt::format("{}: opened for reading only", path_));
  std::string bytes = needs_newline_ ? "\n" : "";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (const HistoryEntry* there = find(e.run_id))
      throw std::runtime_error(fmt::format("{}: run_id {} is already there (line {})", path_, e.run_id, there->line));
    for (std::size_t j = 0; j < i; ++j)
      if (entries[j].run_id == e.run_id)
        throw std::runtime_error(fmt::format("{}: run_id {} is added twice", path_, e.run_id));
    bytes += history_line(e);
    bytes += '\n';
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      (void)!::ftruncate(fd_.get(), end_);  // nothing of this add stays
      throw failure("cannot append", path_, err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_.get()) != 0) throw failure("cannot sync", path_, errno);
  for (const auto& e : entries) {
    entries_.push_back(e);
    entries_.back().line = ++lines_;
  }
  end_ += static_cast<off_t>(bytes.size());
  needs_newline_ = false;
}

}  // namespace chaosbench::reports
