#!/usr/bin/env bash
# fault/abort_latency: from a stop condition being decided to every fault reverted. RUNS
# short runs of a 3-node collective in network namespaces with two faults in effect at
# once (network.loss on node 1 through the NFQUEUE backend's iptables rules, node.pause on
# node 2 through the freezer), and a `during` probe that fails on its first evaluation
# with `abort.for` 0s, so every run aborts about 2 s in. Prints each run's latency and
# the p50, p99 and max (goal: p99 < 200 ms), and each run's exit code must be 4.
#   perf/harness/abort_latency.sh [RUNS]   (default 30, about 2 minutes; needs root and a build)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "network namespaces, the freezer"
runs=${1:-30}
cat >"$tmp/abort.json" <<'EOF'
{
  "schema_version": 1,
  "name": "abort-latency",
  "cluster": { "nodes": 3, "mode": "namespaces" },
  "workload": { "kind": "collective", "collectives": ["allreduce"], "algorithms": ["ring"],
                "sizes": { "min": "1MiB", "max": "1MiB" }, "duration": "20s" },
  "faults": [
    { "name": "lossy", "type": "network.loss", "target": { "nodes": [1] }, "at": "1.5s", "duration": "15s", "percent": "10%" },
    { "name": "paused", "type": "node.pause", "target": { "nodes": [2] }, "at": "1.5s", "duration": "15s" }
  ],
  "probes": [
    { "name": "health", "kind": "command", "mode": "during:paused", "argv": ["false"], "interval": "1s" }
  ],
  "abort": { "when": ["health"], "for": "0s" }
}
EOF
latencies=()
for i in $(seq 1 "$runs"); do
  rc=0
  "$cb" run "$tmp/abort.json" --out "$tmp/run$i" --quiet >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 4 ] || { echo "run $i: exit $rc, expected 4 (see $tmp/run$i)"; exit 1; }
  ms=$(perf_value "$tmp/run$i/results.json" fault/abort_latency)
  latencies+=("$ms")
  echo "run $i: fault/abort_latency $ms ms"
done
python3 - "${latencies[*]}" <<'EOF'
import sys
v = sorted(float(x) for x in sys.argv[1].split())
pct = lambda p: v[min(len(v) - 1, max(0, int(round(p / 100 * len(v) + 0.5)) - 1))]  # nearest rank
print(f"fault/abort_latency over {len(v)} aborted runs: p50 {pct(50):.1f} ms, p99 {pct(99):.1f} ms, max {v[-1]:.1f} ms "
      f"(goal: p99 < 200 ms)")
EOF
