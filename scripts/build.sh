#!/usr/bin/env bash
# Configures and builds chaosbench into build/ (Release). Extra arguments go to cmake.
# CHAOSBENCH_WERROR=ON by default in CI (CI=true), so warnings fail the build there.
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHAOSBENCH_WERROR="${CHAOSBENCH_WERROR:-$werror}" "$@" >/dev/null
cmake --build build -j "$jobs"
