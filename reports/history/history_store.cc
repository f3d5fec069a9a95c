#include "reports/history/history_store.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <tuple>

namespace chaosbench::reports {
namespace {

constexpr std::size_t kMaxComponent = 255;

bool plain(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string store_component(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (plain(c) && !(i == 0 && c == '.')) out += c;
    else out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  if (out.size() > kMaxComponent)
    throw std::runtime_error(fmt::format("the name \"{}...\" is too long for a history store ({} bytes encoded, "
                                         "at most {})",
                                         name.substr(0, 40), out.size(), kMaxComponent));
  return out;
}

std::string decode_component(const std::string& component) {
  std::string out;
  for (std::size_t i = 0; i < component.size(); ++i) {
    if (component[i] == '%' && i + 2 < component.size() && hex_value(component[i + 1]) >= 0 &&
        hex_value(component[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(component[i + 1]) * 16 + hex_value(component[i + 2]));
      i += 2;
    } else {
      out += component[i];
    }
  }
  return out;
}

std::string history_path(const std::string& dir, const std::string& testbed, const std::string& scenario) {
  const std::string t = store_component(testbed.empty() ? kUnlabelledTestbed : testbed);
  const std::string s = store_component(scenario.empty() ? kUnnamedScenario : scenario);
  return (std::filesystem::path(dir) / t / s / kHistoryFileName).string();
}

std::vector<HistoryLocation> list_histories(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<HistoryLocation> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  auto testbeds = fs::directory_iterator(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot read the history store: {}", dir, ec.message()));
  for (const auto& t : testbeds) {
    if (!t.is_directory(ec) || t.is_symlink(ec)) continue;
    auto scenarios = fs::directory_iterator(t.path(), ec);
    if (ec) throw std::runtime_error(fmt::format("{}: cannot read: {}", t.path().string(), ec.message()));
    for (const auto& s : scenarios) {
      if (!s.is_directory(ec) || s.is_symlink(ec)) continue;
      const fs::path file = s.path() / kHistoryFileName;
      if (!fs::is_regular_file(fs::symlink_status(file, ec))) continue;
      out.push_back({decode_component(t.path().filename().string()), decode_component(s.path().filename().string()),
                     file.string()});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.testbed, a.scenario) < std::tie(b.testbed, b.scenario);
  });
  return out;
}

}  // namespace chaosbench::reports
