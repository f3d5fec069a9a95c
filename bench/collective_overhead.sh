#!/usr/bin/env bash
# Harness overhead on the collective workload: busbw that `chaosbench run` reports for a
# 4-rank 16 MiB ring allreduce (scenarios/allreduce-16mib.json), against a minimal gloo
# loop with no harness around it (build/bin/gloo_bare_allreduce), same sizes and
# iterations, run alternately so both see the same machine noise. Prints each pair, the
# medians and their ratio (goal: >= 0.97).
#   bench/collective_overhead.sh [PAIRS]   (default 7; needs a build: scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-7}
bin=build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
harness=()
bare=()
for i in $(seq 1 "$pairs"); do
  "$bin/chaosbench" run scenarios/allreduce-16mib.json --out "$tmp/run$i" --quiet >/dev/null
  h=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(next(m["value"] for m in r["metrics"] if m["name"]=="comm/busbw" and m["labels"]["phase"]=="overall"))' "$tmp/run$i/results.json")
  b=$("$bin/gloo_bare_allreduce" --ranks 4 --bytes 16777216 --warmup 5 --iters 20 |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["busbw"])')
  harness+=("$h")
  bare+=("$b")
  printf 'pair %d: chaosbench %.4f GB/s, bare gloo %.4f GB/s\n' "$i" "$h" "$b"
done
python3 - "${harness[*]}" "${bare[*]}" <<'PY'
import statistics, sys
h = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
mh, mb = statistics.median(h), statistics.median(b)
ratios = [x / y for x, y in zip(h, b)]
print(f"median busbw: chaosbench {mh:.4f} GB/s, bare gloo {mb:.4f} GB/s")
print(f"ratio of medians {mh / mb:.3f}; median of pair ratios {statistics.median(ratios):.3f} (goal >= 0.97)")
PY
