#include "harness/journal/journal_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/journal/process_identity.h"

namespace chaosbench::harness {

JournalFile read_journal(const std::string& path) {
  JournalFile f;
  f.path = path;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) {
    f.error = "empty or unreadable";
    return f;
  }
  auto owner = nlohmann::json::parse(line, nullptr, false);
  if (owner.is_discarded() || !owner.is_object() || !owner.contains("pid")) {
    f.error = "no owner line";
    return f;
  }
  f.run_id = owner.value("run_id", "");
  f.out = owner.value("out", "");
  f.pid = owner.value("pid", 0);
  f.start_time = owner.value("start_time", std::uint64_t{0});
  f.owner_alive = f.pid > 0 && same_process(f.pid, f.start_time);
  std::map<std::uint64_t, JournalEntry> entries;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;  // a torn last line
    auto id = j.value("id", std::uint64_t{0});
    auto op = j.value("op", "");
    if (op == "done") {
      entries.erase(id);
    } else if (op == "record") {
      JournalEntry e;
      e.id = id;
      e.kind = j.value("kind", "");
      for (const auto& [k, v] : j.items())
        if (k != "id" && k != "op" && k != "kind" && v.is_string()) e.fields[k] = v.get<std::string>();
      entries[id] = std::move(e);
    }
  }
  for (auto& [id, e] : entries) f.pending.push_back(std::move(e));
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
