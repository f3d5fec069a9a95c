#include "harness/scenario/json_locations.h"

#include "common/json/json_limits.h"

#include <fmt/format.h>
#include <set>

namespace chaosbench::harness {

TextPosition position_of(std::string_view text, std::size_t offset) {
  if (offset > text.size()) offset = text.size();
  TextPosition pos{1, 1};
  std::size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // a BOM is no column
  for (std::size_t i = start; i < offset; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++pos.line;
      pos.column = 1;
    } else if ((c & 0xC0) != 0x80) {  // count UTF-8 lead bytes only
      ++pos.column;
    }
  }
  return pos;
}

std::optional<std::size_t> find_nesting_over(std::string_view text, std::size_t limit) {
  const auto depth = common::check_json_depth(text, limit);
  return depth.ok ? std::nullopt : std::optional<std::size_t>(depth.offset);
}

std::string join_path(std::string_view parent, std::string_view key) {
  std::string out(parent);
  if (!parent.empty()) out += '.';
  // A control character (a NUL above all) would cut or garble the message it ends up in.
  for (char c : key) {
    if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out;
}

std::string join_path(std::string_view parent, std::size_t index) {
  std::string out(parent);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

namespace {

struct Frame {
  bool is_object = false;
  std::string path;
  std::size_t next_index = 0;  // arrays: index of the next element
  std::string pending_key;     // objects: key whose value comes next
  std::set<std::string> keys;  // objects: keys seen so far, for duplicates
};

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Four hex digits at t[i..i+4), or -1.
long hex4(std::string_view t, std::size_t i) {
  if (i + 4 > t.size()) return -1;
  long v = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    char c = t[k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  return i;
}

// Reads a string starting at the opening quote; returns the offset after the closing quote
// and, when `out` is given, the decoded string (JSON escapes, \\uXXXX and surrogate
// pairs included), so "\\u0069ters" is the key "iters" as nlohmann sees it.
std::size_t read_string(std::string_view t, std::size_t i, std::string* out) {
  ++i;
  while (i < t.size() && t[i] != '"') {
    if (t[i] != '\\' || i + 1 >= t.size()) {
      if (out) out->push_back(t[i]);
      ++i;
      continue;
    }
    char e = t[i + 1];
    if (e == 'u') {
      long cp = hex4(t, i + 2);
      std::size_t used = 6;
      if (cp >= 0xD800 && cp < 0xDC00 && i + 12 <= t.size() && t[i + 6] == '\\' && t[i + 7] == 'u') {
        long low = hex4(t, i + 8);
        if (low >= 0xDC00 && low < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          used = 12;
        }
      }
      if (out && cp >= 0) append_utf8(*out, static_cast<unsigned>(cp));
      i += used;
      continue;
    }
    if (out) {
      switch (e) {
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        default: out->push_back(e);  // \" \\ \/
      }
    }
    i += 2;
  }
  return i + 1;
}

}  // namespace

JsonLocations JsonLocations::scan(std::string_view t) {
  JsonLocations loc;
  std::vector<Frame> stack;
  // nlohmann skips a UTF-8 byte order mark; so do we.
  std::size_t i = skip_space(t, t.starts_with("\xEF\xBB\xBF") ? 3 : 0);
  // The path of the value that starts at the current position.
  auto current_path = [&]() -> std::string {
    if (stack.empty()) return "";
    Frame& f = stack.back();
    if (f.is_object) return join_path(f.path, f.pending_key);
    return join_path(f.path, f.next_index);
  };
  // Reads the key at `at` of the innermost object, records where it is (and whether the
  // object had it already), and returns the position of its value.
  auto read_key = [&](std::size_t at) -> std::size_t {
    std::string key;
    std::size_t j = read_string(t, at, &key);
    Frame& f = stack.back();
    f.pending_key = key;
    std::string key_path = join_path(f.path, key);
    if (!f.keys.insert(key).second) loc.duplicates_.emplace_back(key_path, at);
    loc.keys_.emplace(std::move(key_path), at);
    j = skip_space(t, j);
    if (j < t.size() && t[j] == ':') ++j;
    return skip_space(t, j);
  };
  bool expect_value = true;
  while (i < t.size()) {
    char c = t[i];
    if (expect_value) {
      std::string path = current_path();
      loc.values_.emplace(path, i);
      if (!stack.empty() && !stack.back().is_object) ++stack.back().next_index;
      if (c == '{' || c == '[') {
        stack.push_back(Frame{c == '{', path, 0, {}, {}});
        i = skip_space(t, i + 1);
        if (i < t.size() && (t[i] == '}' || t[i] == ']')) {
          stack.pop_back();
          ++i;
          expect_value = false;
        } else if (c == '{') {
          i = read_key(i);  // the first key
          expect_value = true;
        } else {
          expect_value = true;
        }
        continue;
      }
      if (c == '"') {
        i = read_string(t, i, nullptr);
      } else {
        while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
               t[i] != '\n' && t[i] != '\r' && t[i] != '\t')
          ++i;
      }
      expect_value = false;
      i = skip_space(t, i);
      continue;
    }
    // After a value: a comma, or the end of the enclosing container.
    if (c == ',') {
      i = skip_space(t, i + 1);
      if (!stack.empty() && stack.back().is_object) i = read_key(i);
      expect_value = true;
      continue;
    }
    if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      i = skip_space(t, i + 1);
      continue;
    }
    ++i;  // not valid JSON; stay robust
  }
  return loc;
}

std::optional<std::size_t> JsonLocations::value_offset(const std::string& path) const {
  auto it = values_.find(path);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> JsonLocations::key_offset(const std::string& path) const {
  auto it = keys_.find(path);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

}  // namespace chaosbench::harness
