#!/usr/bin/env bash
# The demo: dependencies, build, then run scenarios/demo.json and say where the report and results are.
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
echo "demo report: $out/report.html (open it in a browser; trace.json opens in ui.perfetto.dev)"
echo "demo results: $out/results.json, summary.md, junit.xml (timeline: $out/timeline.jsonl, logs: $out/logs/)"
exit $rc
