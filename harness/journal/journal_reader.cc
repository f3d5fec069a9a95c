#include "harness/journal/journal_reader.h"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json/json_limits.h"
#include "common/files/safe_files.h"
#include "harness/journal/process_identity.h"

namespace chaosbench::harness {
namespace {

using json = nlohmann::json;

// Opens `path` only if it is a journal this user wrote (see journal_reader.h) and reads
// it whole. Returns "" or why not.
std::string read_trusted(const std::string& path, std::string& text) {
  const int fd = common::open_regular_file(path, /*no_follow=*/true);
  if (fd == -EINVAL || fd == -ELOOP) return "not a regular file (a link, a FIFO, a directory?)";
  if (fd < 0) return fmt::format("cannot open: {}", std::strerror(-fd));
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = fmt::format("cannot inspect: {}", std::strerror(errno));
  } else if (st.st_uid != ::geteuid()) {
    why = fmt::format("owned by uid {}, not by this user (uid {}): not written by chaosbench", st.st_uid, ::geteuid());
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = fmt::format("writable by others (mode {:04o}): anyone could have written it", st.st_mode & 07777);
  } else if (static_cast<std::uint64_t>(st.st_size) > kMaxJournalBytes) {
    why = fmt::format("{} bytes, more than a journal's {}", st.st_size, kMaxJournalBytes);
  } else if (const int err = common::read_open_file(fd, text, kMaxJournalBytes); err != 0) {
    // Shorter if it shrank meanwhile: its last line is then torn, which the reader says.
    why = fmt::format("cannot read: {}", std::strerror(err));
  }
  ::close(fd);
  return why;
}

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

bool run_id_ok(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

// The owner line, checked field by field. Returns "" or what was expected.
std::string read_owner(const json& j, const std::string& path, JournalFile& f) {
  if (!j.is_object()) return "a JSON object (the owner line)";
  if (!j.contains("journal") || !j["journal"].is_number_unsigned() || j["journal"].get<std::uint64_t>() != 1)
    return "\"journal\": 1 (journal format 1)";
  if (!j.contains("run_id") || !j["run_id"].is_string() || !run_id_ok(j["run_id"].get<std::string>()))
    return "\"run_id\": a string of 1-64 letters, digits, '-' or '_'";
  f.run_id = j["run_id"].get<std::string>();
  if (f.run_id != stem(path)) return fmt::format("\"run_id\": \"{}\", the file's name (not \"{}\")", stem(path), f.run_id);
  if (!j.contains("pid") || !j["pid"].is_number_unsigned() || j["pid"].get<std::uint64_t>() == 0 ||
      j["pid"].get<std::uint64_t>() > static_cast<std::uint64_t>(INT_MAX))
    return "\"pid\": a process id (a positive integer)";
  f.pid = static_cast<pid_t>(j["pid"].get<std::uint64_t>());
  if (!j.contains("start_time") || !j["start_time"].is_number_unsigned())
    return "\"start_time\": clock ticks since boot (a non-negative integer)";
  f.start_time = j["start_time"].get<std::uint64_t>();
  if (!j.contains("out") || !j["out"].is_string()) return "\"out\": the run's output directory (a string)";
  f.out = j["out"].get<std::string>();
  return "";
}

// One "record" or "done" line into `entries`. Returns "" or what was expected.
std::string read_entry(const json& j, std::map<std::uint64_t, JournalEntry>& entries) {
  if (!j.is_object()) return "a JSON object (a record or done line)";
  if (!j.contains("id") || !j["id"].is_number_unsigned() || j["id"].get<std::uint64_t>() == 0)
    return "\"id\": a positive integer";
  const auto id = j["id"].get<std::uint64_t>();
  if (!j.contains("op") || !j["op"].is_string()) return "\"op\": \"record\" or \"done\"";
  const auto op = j["op"].get<std::string>();
  if (op == "done") {
    if (j.size() != 2) return "only \"id\" and \"op\" in a done line";
    entries.erase(id);
    return "";
  }
  if (op != "record") return "\"op\": \"record\" or \"done\"";
  if (!j.contains("kind") || !j["kind"].is_string()) return "\"kind\": a string";
  JournalEntry e;
  e.id = id;
  e.kind = j["kind"].get<std::string>();
  for (const auto& [k, v] : j.items()) {
    if (k == "id" || k == "op" || k == "kind") continue;
    if (!v.is_string()) return fmt::format("\"{}\": a string (every undo field is one)", k.substr(0, 64));
    e.fields[k] = v.get<std::string>();
  }
  if (entries.count(id) != 0) return fmt::format("a new id (entry {} is recorded twice)", id);
  entries[id] = std::move(e);
  return "";
}

// Every complete line of `text` in turn; stops at the first wrong one.
void read_lines(const std::string& text, JournalFile& f) {
  std::map<std::uint64_t, JournalEntry> entries;
  std::size_t start = 0;
  for (std::size_t line = 1;; ++line) {
    const std::size_t end = text.find('\n', start);
    // An unterminated last line is a write the harness never finished: it did not act.
    if (end == std::string::npos) break;
    if (end - start > kMaxJournalLine) {
      f.error = fmt::format("{}:{}: expected a line of at most {} bytes", f.path, line, kMaxJournalLine);
      return;
    }
    std::string parse_error;
    const json j = common::parse_json_bounded(std::string_view(text).substr(start, end - start), &parse_error);
    std::string expected = j.is_discarded() ? fmt::format("JSON ({})", parse_error)
                           : line == 1      ? read_owner(j, f.path, f)
                                            : read_entry(j, entries);
    if (!expected.empty()) {
      f.error = fmt::format("{}:{}: expected {}", f.path, line, expected);
      return;
    }
    start = end + 1;
  }
  f.empty = start == 0;
  for (auto& [id, e] : entries) f.pending.push_back(std::move(e));
}

}  // namespace

JournalFile read_journal(const std::string& path) {
  JournalFile f;
  f.path = path;
  std::string text;
  if (std::string why = read_trusted(path, text); !why.empty()) {
    f.error = fmt::format("{}: {}", path, why);
    return f;
  }
  read_lines(text, f);
  if (!f.error.empty()) {
    f.pending.clear();
    return f;
  }
  f.owner_alive = !f.empty && same_process(f.pid, f.start_time);
  return f;
}

std::vector<JournalFile> scan_journals(const std::string& directory) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec))
    if (entry.path().extension() == ".journal") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<JournalFile> out;
  for (const auto& p : paths) out.push_back(read_journal(p));
  return out;
}

}  // namespace chaosbench::harness
