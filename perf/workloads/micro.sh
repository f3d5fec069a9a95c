#!/usr/bin/env bash
# The micro-benchmark suite in one command: runs `chaosbench bench micro` (Google
# Benchmark's table as it goes), then prints the key numbers from results.json.
#   perf/workloads/micro.sh [DIR] [extra options for bench micro, e.g. --filter gemm --min-time 0.5]
#   (default DIR runs/micro-<UTC timestamp>; needs a build: scripts/build.sh; no root)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
out=${1:-runs/micro-$(date -u +%Y%m%dT%H%M%SZ)}
shift || true
status=0
"$cb" bench micro --out "$out" "$@" || status=$?
[ -f "$out/results.json" ] || exit "$status"
python3 - "$out/results.json" <<'PY'
import json, sys

r = json.load(open(sys.argv[1]))
print(f"\n{r['scenario']['name']}: verdict {r['verdict']}" + (f" ({r['reason']})" if r.get('reason') else ""))
skip = {"phase", "benchmark"}
for m in r["metrics"]:
    labels = ", ".join(f"{k}={v}" for k, v in sorted(m["labels"].items()) if k not in skip)
    print(f"  {m['name']:<22} {m['value']:>14.4g} {m['unit']:<10} {labels}")
print(f"results: {sys.argv[1]}")
PY
exit "$status"
