#!/usr/bin/env bash
# The baseline gate's acceptance on this machine (docs/gate.md):
#   A/A: RUNS (default 21) runs of the same short scenario, then `chaosbench compare A B --gate`
#     on each consecutive pair (RUNS - 1 comparisons); goal: at least 19 of 20 pass
#     (exit 0), i.e. the gate does not fail on this machine's run-to-run noise.
#   Injected regressions, on copies of the last run's results.json (rewritten in Python):
#     throughput -30%: every step-time / latency sample divided by 0.7, and the derived
#       bandwidths and throughputs times 0.7; the gate must fail (exit 1);
#     p99 x3: in every latency series, the samples at or above the series' p95 times 3
#       (so the p99 triples and the median stays); the gate must fail on a p99 row.
# The scenario (second argument): perf/scenarios/gate-aa-train.json by default (the
# trainer's step times), or perf/scenarios/gate-aa-collective.json (small-message
# allreduce latency, the noisiest case).
#   perf/harness/gate_aa.sh [RUNS] [SCENARIO]   (needs a build: build/bin/chaosbench; root for namespaces)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${1:-21}
scenario=${2:-perf/scenarios/gate-aa-train.json}

start=$(date +%s)
for i in $(seq 1 "$runs"); do
  perf_run "$scenario" "run$i" >/dev/null 2>&1
  [[ -f $tmp/run$i/results.json ]] || { echo "run $i produced no results.json" >&2; exit 2; }
done
echo "$runs runs of $scenario in $(( $(date +%s) - start )) s"

passed=0; warned=0; total=0
for i in $(seq 2 "$runs"); do
  total=$((total + 1))
  if out=$("$cb" compare "$tmp/run$((i - 1))/results.json" "$tmp/run$i/results.json" --gate); then
    passed=$((passed + 1))
    grep -q '^verdict: WARN' <<<"$out" && warned=$((warned + 1))
  else
    echo "--- A/A comparison run$((i - 1)) -> run$i failed:"
    grep -E '^(FAIL|verdict)' -A1 <<<"$out" | grep -v '^--$' || true
  fi
done
echo "A/A: $passed of $total comparisons passed the gate ($warned of them with WARN rows); goal >= $(( total * 19 / 20 ))"

last="$tmp/run$runs/results.json"
python3 - "$last" "$tmp/slow.json" "$tmp/tail.json" <<'PY'
import json, math, sys

src, slow_path, tail_path = sys.argv[1:4]
TIME_UNITS = {"s", "ms", "us", "ns"}

def nearest_rank(values, p):
    s = sorted(values)
    return s[max(1, math.ceil(p * len(s) / 100)) - 1]

run = json.load(open(src))
slow = json.loads(json.dumps(run))
for s in slow["series"]:
    if s["unit"] in TIME_UNITS:
        s["v"] = [v / 0.7 for v in s["v"]]
    elif s["unit"] in ("GB/s", "samples/s", "req/s"):
        s["v"] = [v * 0.7 for v in s["v"]]
for m in slow["metrics"]:
    if m["unit"] in ("GB/s", "samples/s", "req/s"):
        m["value"] *= 0.7
json.dump(slow, open(slow_path, "w"))

tail = json.loads(json.dumps(run))
for s in tail["series"]:
    if s["unit"] in TIME_UNITS and s["v"]:
        threshold = nearest_rank(s["v"], 95)
        s["v"] = [3 * v if v >= threshold else v for v in s["v"]]
json.dump(tail, open(tail_path, "w"))
PY

check_fails() {  # title, file, row pattern
  local out rc=0
  out=$("$cb" compare "$last" "$2" --gate) || rc=$?
  local rows
  rows=$(grep -cE "^FAIL .* $3 " <<<"$out" || true)
  if [[ $rc -eq 1 ]]; then
    echo "$1: gate FAILED as it should (exit 1; $rows failing $3 rows)"
  else
    echo "$1: gate did NOT fail (exit $rc)"
  fi
  grep -E '^FAIL' -A1 <<<"$out" | head -4
}
check_fails "throughput -30% (latency / 0.7)" "$tmp/slow.json" p50
check_fails "p99 latency x3 (median unchanged)" "$tmp/tail.json" p99
