#!/usr/bin/env bash
# The demo: dependencies, build, then run scenarios/demo.json and say where the results are.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
./scripts/build.sh
out="runs/demo-$(date -u +%Y%m%dT%H%M%SZ)"
set +e
./build/bin/chaosbench run scenarios/demo.json --out "$out" "$@"
rc=$?
set -e
echo
echo "demo results: $out/results.json (timeline: $out/timeline.jsonl, logs: $out/logs/)"
exit $rc
