#include "bench/train/membership/file_membership_backend.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/files/safe_files.h"

namespace chaosbench::bench::train {
namespace {

namespace fs = std::filesystem;

bool is_number(const std::string& name) {
  return !name.empty() && name.size() < 10 && std::all_of(name.begin(), name.end(), ::isdigit);
}

}  // namespace

FileMembershipBackend::FileMembershipBackend(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_ + "/join", ec);
  if (!fs::is_directory(dir_ + "/join"))
    throw std::runtime_error(fmt::format("cannot create {}/join: {}", dir_, ec.message()));
}

std::optional<std::string> FileMembershipBackend::read(const std::string& name) const {
  std::ifstream in(dir_ + "/" + name);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void FileMembershipBackend::write(const std::string& name, const std::string& text) {
  const fs::path path = dir_ + "/" + name;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (std::string error = common::write_file_atomically(path.string(), text); !error.empty())
    throw std::runtime_error(error);
}

std::string FileMembershipBackend::write_once(const std::string& name, const std::string& text) {
  const std::string path = dir_ + "/" + name;
  // The first record to land is the one; later writers read it.
  if (std::string error = common::write_file_once(path, text); !error.empty() && error != "EEXIST")
    throw std::runtime_error(error);
  auto stored = read(name);
  if (!stored) throw std::runtime_error(fmt::format("{} is unreadable", path));
  return *stored;
}

void FileMembershipBackend::remove(const std::string& name) {
  std::error_code ec;
  fs::remove(dir_ + "/" + name, ec);
}

std::map<int, std::string> FileMembershipBackend::numbered(const std::string& folder) const {
  std::map<int, std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_ + "/" + folder, ec)) {
    const std::string name = e.path().filename().string();
    if (!is_number(name)) continue;  // temporaries
    if (auto text = read(folder + "/" + name)) out[std::stoi(name)] = *text;
  }
  return out;
}

}  // namespace chaosbench::bench::train
