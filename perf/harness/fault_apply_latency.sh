#!/usr/bin/env bash
# fault/apply_latency in a real run: scheduled time to fault in effect (journal record
# fsync'd, then the change: cgroup written and the freezer FROZEN for node.pause and
# node.cpu_throttle; an htb class and filter through netlink for network.rate; the delay
# line bound and its iptables chain in place (one iptables-restore) for network.delay
# on the nfqueue backend), over 25 applications each on a 4-node collective (gloo
# allreduce, 4 ranks on this machine's cores). Prints p50/p99/max per type. Goals: p99
# below 5 ms for the node faults, below 2 ms for the netlink-applied network.rate;
# network.delay runs a command (iptables-restore), shown for comparison. Needs root and
# a build (scripts/build.sh). The windows are 80 ms apart at least: the runner applies and
# reverts on one thread, so a revert that runs iptables-restore (~20 ms) would delay an
# application due during it, and that wait would count as the next fault's latency.
#   perf/harness/fault_apply_latency.sh [COUNT]   (CHAOSBENCH=path: another chaosbench binary, to
#   compare two builds side by side)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "node cgroups, network namespaces"
count=${1:-25}
cat > "$tmp/s.json" <<JSON
{"schema_version": 1, "name": "apply-latency", "cluster": {"nodes": 4},
 "workload": {"kind": "collective", "collectives": ["allreduce"], "sizes": {"min": "64KiB", "max": "64KiB"},
              "warmup_iters": 5, "iters": 20, "duration": "$((count * 400 + 1500))ms"},
 "faults": [
  {"name": "pause", "type": "node.pause", "target": {"nodes": [1]}, "at": "500ms", "duration": "80ms",
   "repeat": {"every": "400ms", "count": $count}},
  {"name": "throttle", "type": "node.cpu_throttle", "target": {"nodes": [2]}, "at": "600ms", "duration": "60ms",
   "cpus": 0.2, "repeat": {"every": "400ms", "count": $count}},
  {"name": "rate", "type": "network.rate", "target": {"nodes": [3]}, "at": "680ms", "duration": "60ms",
   "rate": "100mbit", "repeat": {"every": "400ms", "count": $count}},
  {"name": "delay", "type": "network.delay", "target": {"nodes": [0]}, "at": "760ms", "duration": "60ms",
   "delay": "1ms", "repeat": {"every": "400ms", "count": $count}}]}
JSON
"$cb" run "$tmp/s.json" --out "$tmp/out" --quiet >/dev/null
python3 - "$tmp/out/results.json" ${VERBOSE:+-v} <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for f in r["faults"]:
    if f["apply_latency_us"] is not None:
        by.setdefault(f["type"], []).append(f["apply_latency_us"] / 1000)
for t, v in sorted(by.items()):
    v.sort()
    def p(q):  # numpy's linear percentile, as chaosbench's (common/values/percentile.h)
        h = (len(v) - 1) * (q / 100); i = int(h)
        return v[i] if i + 1 >= len(v) else v[i] + (h - i) * (v[i + 1] - v[i])
    print(t, " ".join(f"{x:.2f}" for x in v)) if "-v" in sys.argv else None
    print(f"{t:18} n={len(v):3}  p50 {p(50):.3f} ms  p99 {p(99):.3f} ms  max {v[-1]:.3f} ms  "
          f"(backend {next(f['backend'] for f in r['faults'] if f['type'] == t)})")
PY
