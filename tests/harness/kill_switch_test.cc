// The kill switch file: what counts as stale, and that a hostile `stop` (a link to an
// endless device, a FIFO) neither blocks nor floods the reason.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "bench/protocol/record.h"
#include "harness/run/kill_switch.h"
#include "test_util.h"

namespace kill_switch_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;

TEST_CASE("a stop file older than the run is removed, one pulled during set-up is kept", "[probe_engine]") {
  test::TempDir dir;
  dir.write("stop", "old\n");
  KillSwitch stale(dir.path(), bench::wall_time_now() + 60);  // the file predates the run
  CHECK_FALSE(stale.pulled());

  const double began = bench::wall_time_now() - 60;  // the run began before it was pulled
  dir.write("stop", "pager: p99 over SLO\nsecond line\n");
  KillSwitch fresh(dir.path(), began);
  REQUIRE(fresh.pulled());
  CHECK(fresh.reason() == "pager: p99 over SLO");
  fresh.reset();
  CHECK_FALSE(fresh.pulled());
}

TEST_CASE("a stop file that is a link or a FIFO is pulled but never read", "[probe_engine]") {
  test::TempDir dir;
  KillSwitch sw(dir.path(), 0);
  REQUIRE(::symlink("/dev/zero", dir.file("stop").c_str()) == 0);
  CHECK(sw.pulled());
  CHECK(sw.reason() == "the stop file " + dir.file("stop"));  // returns: /dev/zero is not read
  sw.reset();
  REQUIRE(::mkfifo(dir.file("stop").c_str(), 0600) == 0);
  CHECK(sw.pulled());
  CHECK(sw.reason() == "the stop file " + dir.file("stop"));  // returns: no writer is waited for
}

}  // namespace kill_switch_test
