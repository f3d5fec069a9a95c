#!/usr/bin/env bash
# An LLM replica killed at 70 % of capacity, through `chaosbench run` (root: namespaces):
#   1. scenarios/llm-find-peak.json: find_peak brackets the highest Poisson rate at which
#      the two replicas still meet the SLO for the target share of requests;
#   2. scenarios/llm-replica-kill.json at 0.7 x the bracket's low end: replica 1 killed
#      10 s in, back 6 s later. Printed per phase: goodput, SLO attainment, TTFT and TPOT
#      p50/p99, output tokens/s and the streams that failed (by reason).
#   perf/workloads/llm_replica_kill.sh [--set KEY=VALUE ...]   (the --set apply to both runs)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
peak_results=$(perf_run scenarios/llm-find-peak.json peak "$@" 2>/dev/null)
peak=$(python3 - "$peak_results" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except OSError:
    sys.exit("find_peak: the run left no results.json")
b = {m["labels"].get("bound"): m["value"] for m in r["metrics"]
     if m["name"] == "infer/peak_rate" and m["labels"].get("phase") == "overall"}
if "low" not in b:
    sys.exit("find_peak: no rate met the SLO (no lower bound)")
print(b["low"], b.get("high", float("nan")))
PY
)
read -r low high <<<"$peak"
rate=$(python3 -c "print(round(0.7 * $low, 2))")
echo "find_peak: the peak lies in [$low, $high) requests/s; loading at 70 % of $low = $rate requests/s"
kill=$(perf_run scenarios/llm-replica-kill.json kill --set workload.load.rate="$rate" "$@" 2>/dev/null)
python3 - "$kill" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
phases = [p["name"] for p in r["phases"]] + ["overall"]
def value(name, phase, stat=None, absent=float("nan")):
    total, found = 0.0, False
    for m in r["metrics"]:
        if m["name"] == name and m["labels"].get("phase") == phase:
            if stat:
                return m.get("stats", {}).get(stat, float("nan"))
            total += m["value"]; found = True
    return total if found else absent
print(f"{'phase':26} {'goodput':>8} {'SLO %':>6} {'TTFT p50':>9} {'TTFT p99':>9} {'TPOT p50':>9} {'TPOT p99':>9} {'tok/s':>7} {'failed':>6}")
for p in phases:
    print(f"{p:26} {value('infer/request_goodput', p):8.2f} {value('infer/slo_attainment', p):6.1f} "
          f"{value('infer/ttft', p, 'p50'):9.1f} {value('infer/ttft', p, 'p99'):9.1f} "
          f"{value('infer/tpot', p, 'p50'):9.2f} {value('infer/tpot', p, 'p99'):9.2f} "
          f"{value('infer/output_tokens_per_s', p):7.1f} {value('infer/failed_streams', p, absent=0):6.0f}")
reasons = collections.Counter()
for m in r["metrics"]:
    if m["name"] == "infer/failed_streams" and m["labels"].get("phase") == "overall":
        reasons[m["labels"].get("reason", "?")] += m["value"]
print("failed streams by reason:", dict(reasons) or "none")
print("verdict:", r["verdict"])
PY
