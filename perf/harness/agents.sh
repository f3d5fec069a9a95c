#!/usr/bin/env bash
# The multi-host path's figures, each part one command:
#   perf/harness/agents.sh fanout [HOSTS]  fault apply fan-out over ssh to HOSTS test bed hosts
#                                   (default 16): fault/apply_latency (scheduled time ->
#                                   every host's agent has it in effect and said so) of a
#                                   marker (the link alone), node.pause (SIGSTOP on every
#                                   host) and network.rate (an htb class + filter per peer
#                                   on every host), 25 applications each. Goal: p99 < 10 ms.
#   perf/harness/agents.sh scale           the same for 8, 16, 32, 64, 128 local agents (processes
#                                   on loopback): apply p50/p99 and the controller's own CPU
#                                   (its utime + stime, agents and ranks excluded).
#   perf/harness/agents.sh records         metrics records per second into the controller from 4
#                                   ranks writing 250,000 records each (perf/programs/
#                                   record_flood.cc): directly (local), through local agents,
#                                   through agents on 4 ssh hosts. Goal: >= 200,000/s.
#   perf/harness/agents.sh clock           ssh hosts whose clocks are off by known offsets
#                                   (libfaketime: h1 +37.5 ms, h2 -12.25 ms): the estimates.
#                                   Goal: within 0.5 ms.
#   perf/harness/agents.sh                 all of them.
# Needs root, a build (build/bin), and for fanout/records/clock the test bed's packages
# (scripts/bootstrap.sh). CHAOSBENCH=path runs another chaosbench binary.
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "network namespaces, the test bed"
bed="$tmp/bed"
perf_on_exit "scripts/testbed.sh down $(printf %q "$bed") >/dev/null 2>&1"

bed_up() {  # bed_up N: a test bed of N hosts (taken down first if one is up)
  scripts/testbed.sh down "$bed" >/dev/null 2>&1 || true
  scripts/testbed.sh up "$bed" "$1" >/dev/null
}
ssh_cluster() {  # the cluster object for the test bed's hosts; $1: the agent command
  printf '{"mode": "ssh", "hosts": "%s", "ssh": {"config": "%s"}, "agent": {"command": "%s"}}' \
    "$bed/inventory.json" "$bed/ssh_config" "${1:-$cb}"
}
# run_ctl SCENARIO OUT: the controller in the test bed's controller namespace; prints its
# own CPU seconds (utime + stime, read from /proc until it exits).
run_measured() {
  local scenario=$1 out=$2 pid ticks=0 t
  shift 2
  "$@" "$cb" run "$scenario" --out "$out" -q >/dev/null 2>"$out.err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo "$ticks")
    ticks=${t:-$ticks}
    sleep 0.1
  done
  wait "$pid" || { tail -3 "$out.err" >&2; return 1; }
  echo "scale=3; $ticks / $(getconf CLK_TCK)" | bc
}
# shellcheck source=/dev/null
in_ctl() { ip netns exec "cbtb-$(. "$bed/state"; echo "$TB_ID")-ctl" "$@"; }
fanout_scenario() {  # fanout_scenario FILE CLUSTER NODES WITH_NETWORK
  local faults='{"name": "marker", "type": "marker", "target": {"all": true}, "at": "1s", "duration": "50ms", "repeat": {"every": "300ms", "count": 25}},
    {"name": "pause", "type": "node.pause", "target": {"all": true}, "at": "1100ms", "duration": "50ms", "repeat": {"every": "300ms", "count": 25}}'
  [ "$4" = yes ] && faults+=', {"name": "rate", "type": "network.rate", "target": {"all": true}, "at": "1200ms", "duration": "50ms", "rate": "1gbit", "repeat": {"every": "300ms", "count": 25}}'
  printf '{"schema_version": 1, "name": "agents-fanout", "cluster": %s,
   "workload": {"kind": "command", "argv": ["sleep", "10"]}, "faults": [%s]}\n' \
    "$(echo "$2" | sed "s/{/{\"nodes\": $3, /")" "$faults" > "$1"
}
latencies() {  # latencies RESULTS [PREFIX]: p50/p99/max of fault/apply_latency per type
  python3 - "$1" "${2:-}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {}
for f in r["faults"]:
    if f["error"]: print("  ERROR", f["type"], f["error"]); continue
    by.setdefault(f["type"], []).append(f["apply_latency_us"] / 1000)
for t, v in sorted(by.items()):
    v.sort()
    def p(q):  # numpy's linear percentile, as chaosbench's (common/values/percentile.h)
        h = (len(v) - 1) * (q / 100); i = int(h)
        return v[i] if i + 1 >= len(v) else v[i] + (h - i) * (v[i + 1] - v[i])
    print(f"{sys.argv[2]}{t:13} n={len(v):3}  p50 {p(50):6.2f} ms  p99 {p(99):6.2f} ms  max {v[-1]:6.2f} ms")
PY
}

part_fanout() {
  local n=${1:-16}
  echo "== fault apply fan-out over ssh, $n hosts (goal: p99 < 10 ms)"
  bed_up "$n"
  fanout_scenario "$tmp/fanout.json" "$(ssh_cluster)" "$n" yes
  run_measured "$tmp/fanout.json" "$tmp/fanout" in_ctl >/dev/null
  latencies "$tmp/fanout/results.json" "  "
}

part_scale() {
  echo "== local agents: apply fan-out and the controller's CPU, 8 -> 128 agents"
  for n in 8 16 32 64 128; do
    fanout_scenario "$tmp/scale$n.json" '{"mode": "local-agents"}' "$n" no
    local cpu
    cpu=$(run_measured "$tmp/scale$n.json" "$tmp/scale$n" env)
    local wall
    wall=$(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['duration_s'], 1))" "$tmp/scale$n/results.json")
    echo "  $n agents: controller CPU ${cpu} s over ${wall} s ($(echo "scale=1; 100 * $cpu / $wall" | bc)% of a core)"
    latencies "$tmp/scale$n/results.json" "    "
  done
}

records_rate() {  # records_rate OUT: records per second, workload start -> run finished
  python3 - "$1" <<'PY'
import json, sys
d = sys.argv[1]; r = json.load(open(d + "/results.json"))
tl = [json.loads(l) for l in open(d + "/timeline.jsonl")]
start = next(e["t"] for e in tl if e["event"] == "workload_started")
end = next(e["t"] for e in tl if e["event"] == "run_finished")
n = r["protocol"]["samples"]
print(f"{n} records in {end - start:.2f} s: {n / (end - start):,.0f} records/s (malformed {r['protocol']['malformed']})")
PY
}

part_records() {
  echo "== metrics records into the controller, 4 ranks x 250,000 records (goal: >= 200,000/s)"
  local flood="$perf_bin_dir/record_flood" mode
  for mode in local local-agents; do
    printf '{"schema_version": 1, "name": "flood", "cluster": {"nodes": 4, "mode": "%s"},
     "workload": {"kind": "command", "argv": ["%s", "250000"]}}\n' "$mode" "$flood" > "$tmp/flood-$mode.json"
    run_measured "$tmp/flood-$mode.json" "$tmp/flood-$mode" env >/dev/null
    echo "  $mode: $(records_rate "$tmp/flood-$mode")"
  done
  bed_up 4
  printf '{"schema_version": 1, "name": "flood", "cluster": %s, "workload": {"kind": "command", "argv": ["%s", "250000"]}}\n' \
    "$(ssh_cluster)" "$flood" > "$tmp/flood-ssh.json"
  run_measured "$tmp/flood-ssh.json" "$tmp/flood-ssh" in_ctl >/dev/null
  echo "  ssh (4 hosts): $(records_rate "$tmp/flood-ssh")"
}

part_clock() {
  echo "== clock offsets injected with libfaketime (goal: estimate within 0.5 ms)"
  local lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
  [ -f "$lib" ] || { echo "  skipped: no $lib (faketime)"; return 0; }
  bed_up 4
  cat > "$tmp/skewed" <<SH
#!/bin/sh
case "\$(hostname)" in h1) export FAKETIME=+0.0375 ;; h2) export FAKETIME=-0.01225 ;; esac
[ -n "\${FAKETIME:-}" ] && export LD_PRELOAD=$lib FAKETIME_DONT_FAKE_MONOTONIC=1
exec "$cb" "\$@"
SH
  chmod +x "$tmp/skewed"
  printf '{"schema_version": 1, "name": "clock", "cluster": %s, "workload": {"kind": "collective", "collectives": ["allreduce"],
    "sizes": {"min": "1KiB", "max": "64KiB", "factor": 4}, "duration": "5s"}}\n' "$(ssh_cluster "$tmp/skewed")" > "$tmp/clock.json"
  run_measured "$tmp/clock.json" "$tmp/clock" in_ctl >/dev/null
  python3 - "$tmp/clock/results.json" <<'PY'
import json, sys
truth = {"h1": 37.5, "h2": -12.25}
for h in json.load(open(sys.argv[1]))["environment"]["hosts"]:
    want = truth.get(h["name"], 0.0)
    print(f"  {h['name']}: injected {want:+7.3f} ms, estimated {h['clock_offset_ms']:+8.3f} ms "
          f"(error {abs(h['clock_offset_ms'] - want) * 1000:6.1f} us, uncertainty +-{h['clock_uncertainty_ms'] * 1000:.1f} us)")
PY
}

case "${1:-all}" in
  fanout) part_fanout "${2:-16}" ;;
  scale) part_scale ;;
  records) part_records ;;
  clock) part_clock ;;
  all) part_fanout 16; part_scale; part_records; part_clock ;;
  *) sed -n '2,22p' "$perf_script"; exit 2 ;;
esac
