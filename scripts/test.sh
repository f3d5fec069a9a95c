#!/usr/bin/env bash
# The whole test set-up: dependencies, build, every test through ctest.
# Non-zero on any failure. Tests that need root skip with the reason elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
./scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 600 -j "${CHAOSBENCH_TEST_JOBS:-1}"
