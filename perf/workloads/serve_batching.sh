#!/usr/bin/env bash
# The serving workload's goals, through `chaosbench run` on scenarios/serve-replica-kill.json
# (3 replicas of the demo MLP, 4-node namespaced cluster; root):
#   dynamic batching: the load generator in offline mode (every connection keeps a request
#     in flight: a load that saturates the server) against the replicas with batching off
#     (max_batch_size 1) and on (64 rows, 2 ms, preferred 16/32/64), side by side:
#     infer/throughput and p99 latency (goal: >= 3x the throughput at equal or lower p99);
#   int8 against fp32 at the same saturating load;
#   failover: a replica killed at 70% of the measured batched capacity (server mode,
#     Poisson arrivals): error rate over the whole run (goal < 1%) and p99 in the window.
#   perf/workloads/serve_batching.sh   (needs a build; root)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
scenario=scenarios/serve-replica-kill.json
no_fault=(--set 'faults=[]')
offline=(--set workload.load.scenario=offline --set workload.load.duration=8s --set workload.load.connections=16)
run() { perf_run "$scenario" "$@" 2>/dev/null; }  # name, args... -> results.json path
unbatched=$(run unbatched "${no_fault[@]}" "${offline[@]}" --set workload.batching.max_batch_size=1 \
  --set 'workload.batching.preferred_batch_sizes=[1]' --set workload.batching.max_queue_delay=0us)
batched=$(run batched "${no_fault[@]}" "${offline[@]}")
int8=$(run int8 "${no_fault[@]}" "${offline[@]}" --set workload.dtype=int8)
capacity=$(perf_value "$batched" infer/throughput phase=overall)
qps=$(python3 -c "print(round(0.7 * $capacity))")
kill=$(run kill --set workload.load.qps="$qps" --set workload.load.duration=20s --set faults.0.at=6s)
python3 - "$unbatched" "$batched" "$int8" "$kill" "$qps" <<'PY'
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except OSError:
        print(f"missing {p}: the run failed"); return None
def metric(r, name, phase="overall", stat=None):
    for m in r["metrics"]:
        if m["name"] == name and m["labels"].get("phase") == phase:
            return m["stats"][stat] if stat else m["value"]
    return float("nan")
unb, bat, i8, kill = (load(p) for p in sys.argv[1:5])
for title, r in (("batching off", unb), ("batching on ", bat), ("int8, batched", i8)):
    if r: print(f"{title}: {metric(r, 'infer/throughput'):8.0f} req/s, latency p50 {metric(r, 'infer/latency', stat='p50'):.2f} ms, "
                f"p99 {metric(r, 'infer/latency', stat='p99'):.2f} ms, batch {metric(r, 'infer/batch_size'):.1f}")
if unb and bat:
    print(f"batching: {metric(bat, 'infer/throughput') / metric(unb, 'infer/throughput'):.1f}x throughput, "
          f"p99 {metric(bat, 'infer/latency', stat='p99'):.2f} vs {metric(unb, 'infer/latency', stat='p99'):.2f} ms (goal >= 3x at equal or lower p99)")
if kill:
    print(f"replica killed at {sys.argv[5]} req/s (70% of capacity): error rate {metric(kill, 'infer/error_rate'):.3f}% "
          f"(goal < 1%), p99 in the window {metric(kill, 'infer/latency', 'fault:replica-down', 'p99'):.2f} ms, "
          f"baseline p99 {metric(kill, 'infer/latency', 'baseline', 'p99'):.2f} ms; verdict {kill['verdict']}")
PY
