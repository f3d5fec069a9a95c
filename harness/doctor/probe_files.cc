#include "harness/doctor/probe_files.h"

#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace chaosbench::harness {

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return out.str();
}

std::optional<std::string> read_gzip_file(const std::string& path) {
  // zlib's gz* C ABI, declared here rather than from <zlib.h> (the headers need not be
  // installed): gzFile is an opaque pointer.
  using GzOpen = void* (*)(const char*, const char*);
  using GzRead = int (*)(void*, void*, unsigned);
  using GzClose = int (*)(void*);
  void* lib = dlopen("libz.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return std::nullopt;
  auto gz_open = reinterpret_cast<GzOpen>(dlsym(lib, "gzopen"));
  auto gz_read = reinterpret_cast<GzRead>(dlsym(lib, "gzread"));
  auto gz_close = reinterpret_cast<GzClose>(dlsym(lib, "gzclose"));
  std::optional<std::string> result;
  if (gz_open && gz_read && gz_close) {
    if (void* file = gz_open(path.c_str(), "rb")) {
      std::string text;
      char buffer[16384];
      int n = 0;
      while ((n = gz_read(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
      if (n == 0) result = std::move(text);  // n < 0: corrupt or unreadable
      gz_close(file);
    }
  }
  dlclose(lib);
  return result;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto end = text.find('\n');
    if (end == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r";
  auto begin = text.find_first_not_of(kBlanks);
  if (begin == std::string_view::npos) return {};
  auto end = text.find_last_not_of(kBlanks);
  return text.substr(begin, end - begin + 1);
}

}  // namespace chaosbench::harness
