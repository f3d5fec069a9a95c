// Where a history store (`chaosbench history`, docs/history.md) keeps each testbed ×
// scenario: DIR/<testbed>/<scenario>/history.jsonl. The testbed is the results' label
// (CHAOSBENCH_TESTBED), "unlabelled" when it has none; the scenario is its name.
// Names come from results files, so each is percent-encoded into one path component:
// every byte but A-Z a-z 0-9 - _ . becomes %XX, and so does a leading dot. The encoding
// is one-to-one (two names never share a file) and gives no "/", ".", ".." or hidden
// name, so no name reaches outside DIR. Pure, apart from list_histories, which reads DIR.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::reports {

inline constexpr const char* kUnlabelledTestbed = "unlabelled";
inline constexpr const char* kUnnamedScenario = "unnamed";
inline constexpr const char* kHistoryFileName = "history.jsonl";

// The component for a name; throws std::runtime_error when it would pass 255 bytes (a
// file name's limit), naming the name's start.
std::string store_component(const std::string& name);
// The inverse; text that is not an encoding comes back as it is.
std::string decode_component(const std::string& component);

// DIR/<testbed or "unlabelled">/<scenario or "unnamed">/history.jsonl.
std::string history_path(const std::string& dir, const std::string& testbed, const std::string& scenario);

struct HistoryLocation {
  std::string testbed;   // decoded ("unlabelled" for the empty label)
  std::string scenario;  // decoded
  std::string path;
};
// Every DIR/*/*/history.jsonl, sorted by testbed then scenario; empty when DIR does not
// exist. Throws std::runtime_error when DIR cannot be read.
std::vector<HistoryLocation> list_histories(const std::string& dir);

}  // namespace chaosbench::reports
