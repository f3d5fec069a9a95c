#!/usr/bin/env bash
# The whole test set-up: dependencies, build, every test through ctest.
# Non-zero on any failure. A test that cannot do its work here (no root, no GPU, no
# netem...) shows as skipped in ctest's list, and its reason is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
./scripts/build.sh
status=0
ctest --test-dir build --output-on-failure --timeout 600 -j "${CHAOSBENCH_TEST_JOBS:-1}" || status=$?
# ctest lists the tests that could not do their work here as skipped; this says why.
awk '/^[0-9]+\/[0-9]+ Testing: / { sub(/^[0-9]+\/[0-9]+ Testing: /, ""); name = $0 }
     /^ *skipped: / { sub(/^ */, ""); print "skipped: " name ": " substr($0, 10) }' \
  build/Testing/Temporary/LastTest.log 2>/dev/null || true
exit "$status"
