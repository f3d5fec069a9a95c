#!/usr/bin/env bash
# Harness overhead on the collective workload: busbw that `chaosbench run` reports for a
# 4-rank 16 MiB ring allreduce (scenarios/allreduce-16mib.json), against a minimal gloo
# loop with no harness around it (perf/programs/gloo_bare_allreduce.cc), same sizes and
# iterations, run alternately so both see the same machine noise. Prints each pair, the
# medians and their ratio (goal: >= 0.97).
#   perf/workloads/collective_overhead.sh [PAIRS]   (default 11; needs a build: scripts/build.sh)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
pairs=${1:-11}
harness=()
bare=()
run_harness() {
  "$cb" run scenarios/allreduce-16mib.json --out "$tmp/run$1" --quiet >/dev/null
  perf_value "$tmp/run$1/results.json" comm/busbw phase=overall
}
run_bare() {
  "$perf_bin_dir/gloo_bare_allreduce" --ranks 4 --bytes 16777216 --warmup 5 --iters 20 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["busbw"])'
}
for i in $(seq 1 "$pairs"); do
  # Alternate which side goes first so neither always runs on a warmer machine.
  if [ $((i % 2)) -eq 1 ]; then h=$(run_harness "$i"); b=$(run_bare); else b=$(run_bare); h=$(run_harness "$i"); fi
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
