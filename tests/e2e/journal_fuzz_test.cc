// Fuzzing the journal reader and `chaosbench cleanup` with seeded malformed journals:
// random bytes, truncated and bit-flipped valid journals, wrong types, 100,000 levels of
// nesting, huge and negative numbers, paths outside the run, very long lines. Nothing may
// crash, memory stays bounded, and every bad file gets an error naming it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sys/resource.h>
#include <sys/stat.h>

#include "harness/journal/entry_checks.h"
#include "harness/journal/journal_reader.h"
#include "test_util.h"

namespace journal_fuzz_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace chaosbench::harness;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Change to reproduce a failure; the test prints the one it used.
constexpr std::uint64_t kSeed = 0x15c1ea9u;

class JournalFuzzer {
 public:
  explicit JournalFuzzer(std::uint64_t seed) : rng_(seed) {}

  // A journal for run `id`, malformed the way case `n` says (cycling through them all).
  std::string make(int n, const std::string& id) {
    const std::string valid = valid_journal(id);
    switch (n % 10) {
      case 0: return random_bytes(pick(0, 3000));
      case 1: return valid.substr(0, pick(0, valid.size()));
      case 2: return flip(valid);
      case 3: return owner(id) + "{\"id\":" + odd_value() + ",\"op\":\"record\",\"kind\":\"path\",\"path\":" + odd_value() + "}\n";
      case 4: return "{\"journal\":1,\"run_id\":\"" + id + "\",\"pid\":" + odd_value() + ",\"start_time\":" + odd_value() + ",\"out\":" + odd_value() + "}\n";
      case 5: return n % 100 == 5 ? owner(id) + std::string(100000, '[') + std::string(100000, ']') + "\n" : valid + "[[[[[[[[[[\n";
      case 6: return owner(id) + record(1, "path", "\"path\":\"" + outside() + "\"") + record(2, "cgroup", "\"path\":\"" + outside() + "\"");
      case 7: return n % 50 == 7 ? owner(id) + "{\"id\":1,\"op\":\"record\",\"kind\":\"path\",\"path\":\"" + std::string(200000, 'a') + "\"}\n" : valid + std::string(pick(0, 500), ' ') + "\n";
      case 8: return owner(id) + record(1, "process_group", "\"pgid\":\"" + number_text() + "\",\"start_time\":\"" + number_text() + "\"") + record(2, random_bytes(8), "\"x\":\"y\"");
      default: return owner(id) + random_lines();
    }
  }

 private:
  std::size_t pick(std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_); }
  std::string random_bytes(std::size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(pick(0, 255));
    return s;
  }
  std::string owner(const std::string& id) {
    return "{\"journal\":1,\"run_id\":\"" + id + "\",\"pid\":" + std::to_string(pick(4194305, 2000000000)) +
           ",\"start_time\":" + std::to_string(pick(1, 1u << 30)) + ",\"out\":\"o\"}\n";
  }
  static std::string record(int id, const std::string& kind, const std::string& fields) {
    return "{\"id\":" + std::to_string(id) + ",\"op\":\"record\",\"kind\":\"" + kind + "\"," + fields + "}\n";
  }
  std::string valid_journal(const std::string& id) {
    // pgids above pid_max's largest value: no process can be hit, whatever the checks say.
    return owner(id) + record(1, "path", "\"path\":\"/tmp/chaosbench-" + id + "\"") +
           record(2, "process_group", "\"pgid\":\"" + std::to_string(pick(4194305, 2000000000)) + "\",\"start_time\":\"7\"") +
           record(3, "cgroup", "\"path\":\"/sys/fs/cgroup/freezer/chaosbench-" + id + "/node0\"") +
           "{\"id\":1,\"op\":\"done\"}\n";
  }
  std::string flip(std::string s) {
    for (int i = 0, n = static_cast<int>(pick(1, 8)); i < n && !s.empty(); ++i) s[pick(0, s.size() - 1)] ^= static_cast<char>(1 << pick(0, 7));
    return s;
  }
  std::string odd_value() {
    static const char* values[] = {"\"12\"", "-1", "-2147483649", "1e999", "18446744073709551616", "99999999999999999999999",
                                   "1.5", "true", "null", "[1]", "{\"a\":1}", "\"\"", "0", "2147483648"};
    return values[pick(0, std::size(values) - 1)];
  }
  std::string number_text() {
    static const char* values[] = {"-1", "-4194305", "0", "1", "99999999999999999999999", "1e9", " 12", "0x10", ""};
    return values[pick(0, std::size(values) - 1)];
  }
  std::string outside() {
    static const char* values[] = {"/", "/etc", "/tmp/chaosbench-x/../../etc", "relative", "/sys/fs/cgroup/../../etc",
                                   "/tmp/chaosbench-", "/sys/fs/cgroup/chaosbench-other/node0"};
    return values[pick(0, std::size(values) - 1)];
  }
  std::string random_lines() {
    std::string s;
    for (int i = 0, n = static_cast<int>(pick(1, 20)); i < n; ++i)
      s += pick(0, 1) ? random_bytes(pick(0, 80)) + "\n" : record(static_cast<int>(pick(0, 5)), "path", "\"path\":" + odd_value());
    return s;
  }

  std::mt19937_64 rng_;
};

long max_rss_kb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST_CASE("journal fuzz: 2,000 malformed journals are read and cleaned without a crash", "[journal][fuzz]") {
  std::cout << "journal fuzz seed: 0x" << std::hex << kSeed << std::dec << " (kSeed in journal_fuzz_test.cc)\n";
  TempDir dir;
  const std::string journals = dir.file("journals");
  fs::create_directory(journals);
  fs::permissions(journals, fs::perms::owner_all, fs::perm_options::replace);
  JournalFuzzer fuzz(kSeed);
  const long rss_before = max_rss_kb();
  int bad = 0;
  for (int n = 0; n < 2000; ++n) {
    const std::string id = "fuzz" + std::to_string(n);
    const std::string path = (n % 8 == 0 ? journals : dir.path()) + "/" + id + ".journal";
    const std::string text = fuzz.make(n, id);
    std::ofstream(path, std::ios::binary) << text;
    INFO("case " << n << ", seed 0x" << std::hex << kSeed);
    const JournalFile j = read_journal(path);
    if (!j.error.empty()) {
      ++bad;
      CHECK(j.error.starts_with(path));  // names the file (and the line, where it has one)
      CHECK(j.pending.empty());
      continue;
    }
    // Well formed: each entry is either plausible or gets a reason.
    for (const auto& e : j.pending) {
      const std::string why = check_entry(j, e);
      if (e.kind != "path" && e.kind != "process_group" && e.kind != "cgroup") CHECK_FALSE(why.empty());
    }
  }
  CHECK(bad > 1000);
  CHECK(max_rss_kb() - rss_before < 256 * 1024);  // bounded: no file costs more than its size
  // And the command on a directory of 250 of them: it finishes, reports, exits 1.
  auto c = run_command({binary(), "cleanup", "--journal-dir", journals}, 60s);
  INFO(c.out.substr(0, 4000) << c.err);
  CHECK(c.exit_code == 1);
  CHECK_THAT(c.out, Catch::Contains(": expected "));
  CHECK(c.err.find("terminate") == std::string::npos);
}

}  // namespace journal_fuzz_test
