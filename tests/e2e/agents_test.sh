#!/usr/bin/env bash
# The agent modes end to end on the test bed (scripts/testbed.sh), one chaosbench agent
# per host: MODE "ssh" (a real sshd per host, the system ssh client) or "slurm" (Debian's
# slurmctld and a slurmd per host; the agents are one srun step).
#   - a collective and a train run with node.kill + restart_after pass across 4 hosts;
#   - the agents' link mesh and node telemetry: a hidden network.delay on h2 is named,
#     blind, as nic node2 (live within 15 s, and by `chaosbench diagnose`);
#   - SIGKILL of the controller mid-fault: within agent_timeout + 2 s no rank, agent,
#     paused process, qdisc, rule or agent state remains on any host;
#   - bad input is exit 3 with the host named, and nothing is left on any host: ssh, an
#     unreachable host, a refused key, a missing binary, an interface not allowed; slurm,
#     an allocation with fewer nodes than the scenario, a missing binary.
# Usage: agents_test.sh ssh|slurm CHAOSBENCH. Skips (with the reason) without root, sshd
# or (slurm) the Slurm daemons.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:?usage: agents_test.sh ssh|slurm CHAOSBENCH}
cb=$(realpath "${2:?usage: agents_test.sh ssh|slurm CHAOSBENCH}")
# shellcheck source=tests/e2e/testbed_checks.sh
. "$root/tests/e2e/testbed_checks.sh"
if [ "$mode" = slurm ]; then
  for p in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/srun; do
    [ -x "$p" ] || { echo "skipped: no $p (munge, slurmctld, slurmd, slurm-client; scripts/bootstrap.sh installs them)"; exit 0; }
  done
fi
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -f "$faketime_lib" ] || { echo "skipped: no $faketime_lib (faketime, for hosts whose clocks are off; scripts/bootstrap.sh installs it)"; exit 0; }
testbed_test_start

"$tb" up "$dir" 4 $([ "$mode" = slurm ] && echo --slurm) >/dev/null || { echo "FAILED: up"; exit 1; }
. "$dir/state"
ctl() { "$tb" ctl "$dir" "$@"; }

# What a run may have left on host $1: its chaosbench processes (agents, ranks), our tc
# qdiscs, iptables rules, agent state. Prints each thing found; nothing means clean.
leftovers() {
  local ns="cbtb-$TB_ID-$1" pid
  for pid in $(ip netns pids "$ns"); do
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && continue
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q chaosbench && echo "process $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline")"
  done
  ip netns exec "$ns" tc qdisc show dev eth0 | grep -E 'htb|netem' | sed 's/^/qdisc: /'
  ip netns exec "$ns" iptables -S | grep -v '^-P' | sed 's/^/iptables: /'
  local id
  # Only this test's runs (their ids are in their timelines): other runs may be going on.
  for id in $(cat "$work"/*/timeline.jsonl 2>/dev/null | grep -o '"run_id": *"[0-9a-f]*"' | grep -o '[0-9a-f]\{8,\}' | sort -u); do
    [ -e "/tmp/chaosbench-$id-n${1#h}" ] && echo "state: /tmp/chaosbench-$id-n${1#h}"
    find /sys/fs/cgroup -maxdepth 8 -type d -name "chaosbench-$id-n${1#h}" 2>/dev/null | sed "s/^/cgroup: /"
  done
}
all_clean() {
  local h out=""
  for h in h0 h1 h2 h3; do out+=$(leftovers "$h"); done
  [ -z "$out" ] || { echo "$out" | head -5; return 1; }
}

cluster() {  # the cluster object of this mode (ssh: inventory $1, ssh config $2), the agent $3
  local agent=${3:-$cb}
  if [ "$mode" = slurm ]; then
    printf '{"mode": "slurm", "nodes": 4, "slurm": {"interfaces": ["eth0"]}, "agent": {"command": "%s", "timeout": "3s"}}' "$agent"
  else
    printf '{"mode": "ssh", "hosts": "%s", "ssh": {"config": "%s"}, "agent": {"command": "%s", "timeout": "3s"}}' "$1" "$2" "$agent"
  fi
}
scenario() {  # scenario file $1 with cluster $2, workload $3, faults $4
  printf '{"schema_version": 1, "name": "ssh-test", "cluster": %s, "workload": %s, "faults": %s}\n' "$2" "$3" "$4" > "$1"
}
collective='{"kind": "collective", "collectives": ["allreduce"], "sizes": {"min": "1KiB", "max": "64KiB", "factor": 4}, "iters": 5}'

# 1. A collective across the 4 hosts.
scenario "$work/coll.json" "$(cluster "$dir/inventory.json" "$dir/ssh_config")" "$collective" '[]'
ctl "$cb" run "$work/coll.json" --out "$work/coll" -q >/dev/null 2>"$work/coll.err" || tail -5 "$work/coll.err"
passed() { python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['verdict'] != 'pass')" "$1" 2>/dev/null; }
check "a collective across 4 hosts passes" passed "$work/coll/results.json"
check "environment.hosts names h3 at its address" grep -q "\"address\": \"$TB_NET.4\"" "$work/coll/results.json"
check "results.json says how the cluster was made" grep -Eq '4 (hosts over SSH|Slurm nodes)' "$work/coll/results.json"
check "nothing is left on any host" all_clean

# 1a. A node fault that needs the node's cgroups on its host: node.cpu_throttle on node 1.
scenario "$work/throttle.json" "$(cluster "$dir/inventory.json" "$dir/ssh_config")" \
  '{"kind": "collective", "collectives": ["allreduce"], "sizes": {"min": "1KiB", "max": "1KiB"}, "duration": "4s"}' \
  '[{"name": "slow", "type": "node.cpu_throttle", "target": {"nodes": [1]}, "at": "1s", "duration": "2s", "cpus": 0.2}]'
ctl "$cb" run "$work/throttle.json" --out "$work/throttle" -q >/dev/null 2>"$work/throttle.err" || tail -5 "$work/throttle.err"
check "node.cpu_throttle acts on h1 through its agent's cgroups" python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); f=r['faults'][0]
sys.exit(not (r['verdict'] == 'pass' and not f['error'] and f['applied_at_s'] is not None and f['reverted_at_s'] is not None))" \
  "$work/throttle/results.json"
check "nothing is left on any host" all_clean

# 1b. Hosts whose clocks are off: h1 by +37.5 ms, h2 by -12.25 ms (libfaketime under the
# agent and so under its ranks, as a host with a wrong clock). The controller's estimate of
# each offset must be within 0.5 ms of the truth, or, on a host so loaded that no exchange
# came back within 1 ms, within the uncertainty the estimate states (half the best round
# trip: RFC 5905's bound, harness/agent/clock_offset.h), which must then stay under 5 ms.
{
  cat > "$work/skewed-chaosbench" <<SH
#!/bin/sh
case "\$(hostname)" in
  h1) export FAKETIME=+0.0375 ;;
  h2) export FAKETIME=-0.01225 ;;
esac
[ -n "\${FAKETIME:-}" ] && export LD_PRELOAD=$faketime_lib FAKETIME_DONT_FAKE_MONOTONIC=1
exec "$cb" "\$@"
SH
  chmod +x "$work/skewed-chaosbench"
  scenario "$work/clock.json" "$(cluster "$dir/inventory.json" "$dir/ssh_config" "$work/skewed-chaosbench")" "$collective" '[]'
  ctl "$cb" run "$work/clock.json" --out "$work/clock" -q >/dev/null 2>"$work/clock.err" || tail -5 "$work/clock.err"
  offsets=$(python3 -c "
import json,sys
for h in json.load(open(sys.argv[1]))['environment']['hosts']: print(h['name'], h['clock_offset_ms'], h['clock_uncertainty_ms'])" "$work/clock/results.json")
  echo "$offsets" | sed 's/^/  clock offset (ms) and uncertainty: /'
  near() {
    awk -v want="$2" -v h="$1" '$1 == h { d = $2 - want; if (d < 0) d = -d; bound = ($3 > 0.5) ? $3 : 0.5
                                          ok = d <= bound && $3 < 5; found = 1 } END { exit !(found && ok) }' <<< "$offsets"
  }
  check "h0's clock offset is estimated within 0.5 ms of 0" near h0 0
  check "h1's injected +37.5 ms is estimated within 0.5 ms" near h1 37.5
  check "h2's injected -12.25 ms is estimated within 0.5 ms" near h2 -12.25
}

# 2. Training with a node killed at step 30 and brought back 1 s later.
train='{"kind": "train", "model": {"layers": [64, 128, 16]}, "batch_size": 256, "steps": 120, "checkpoint": {"every_steps": 20}, "recovery": {"mode": "restart", "max_restarts": 2}}'
scenario "$work/train.json" "$(cluster "$dir/inventory.json" "$dir/ssh_config")" "$train" \
  '[{"name": "down", "type": "node.kill", "target": {"nodes": [2]}, "at_step": 30, "restart_after": "1s"}]'
ctl "$cb" run "$work/train.json" --out "$work/train" -q >/dev/null 2>"$work/train.err" || tail -5 "$work/train.err"
check "training with node.kill + restart passes across hosts" passed "$work/train/results.json"
check "one restart was made" python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))
v=[m['value'] for m in r['metrics'] if m['name']=='resilience/restarts']
sys.exit(0 if v and v[0]==1 else 1)" "$work/train/results.json"
check "nothing is left on any host" all_clean

# 3. SIGKILL of the controller while node 1 is paused (SIGSTOP, journaled on its host).
long='{"kind": "collective", "collectives": ["allreduce"], "sizes": {"min": "1KiB", "max": "1KiB"}, "duration": "60s"}'
scenario "$work/kill.json" "$(cluster "$dir/inventory.json" "$dir/ssh_config")" "$long" \
  '[{"name": "pause", "type": "node.pause", "target": {"nodes": [1]}, "at": "1s", "duration": "50s"}]'
# ip netns exec execs the controller itself, so $! is its pid (a shell function would
# put a subshell in between).
( [ "$mode" = slurm ] && . "$dir/slurm.env" && export SLURM_CONF
  exec ip netns exec "cbtb-$TB_ID-ctl" "$cb" run "$work/kill.json" --out "$work/kill" -q >/dev/null 2>&1 ) &
controller=$!
for _ in $(seq 100); do grep -q '"fault_applied"' "$work/kill/timeline.jsonl" 2>/dev/null && break; sleep 0.1; done
check "the pause was applied" grep -q '"fault_applied"' "$work/kill/timeline.jsonl"
# Paused: SIGSTOPped (state T) or frozen in the node's freezer cgroup (state D or S, with
# the cgroup's freezer.state FROZEN or cgroup.freeze 1).
paused_h1() {
  local pid state cg
  for pid in $(ip netns pids "cbtb-$TB_ID-h1"); do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "chaosbench worker" || continue
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
    [ "$state" = T ] && return 0
    cg=$(awk -F: '$2 == "freezer" {print $3} $1 == "0" {print $3}' "/proc/$pid/cgroup" | head -1)
    grep -qs FROZEN "/sys/fs/cgroup/freezer$cg/freezer.state" && return 0
    grep -qs 1 "/sys/fs/cgroup$cg/cgroup.freeze" && return 0
  done
  return 1
}
check "the paused rank on h1 is stopped or frozen" paused_h1
check "h1's node cgroups exist during the run (so their absence after means removed)" sh -c \
  "find /sys/fs/cgroup -maxdepth 8 -type d -name 'chaosbench-*-n1' | grep -q ."
kill -9 "$controller"
killed=$(date +%s.%N)
until all_clean >/dev/null 2>&1; do
  [ "$(echo "$(date +%s.%N) - $killed > 5" | bc)" = 1 ] && break
  sleep 0.1
done
took=$(echo "$(date +%s.%N) - $killed" | bc)
check "SIGKILLed controller: every host is clean within agent_timeout + 2 s (took ${took} s)" all_clean
wait "$controller" 2>/dev/null
# The controller's own journal (its runtime directory) is this machine's to clean up.
check "cleanup reverts the killed controller's own journal" sh -c "'$cb' cleanup | grep -q 'output $work/kill)'"

# 3a. network.delay 20ms on node 0 (both ways) of a 2-node job on h0 and h1: h0's pings
# to h1 (in the job) rise by 40 ms; its pings to h3 (same interface, not in the job) do not.
if [ "$mode" = ssh ]; then
  h1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[1]['address'])" "$dir/inventory.json")
  h3=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[3]['address'])" "$dir/inventory.json")
  ping="$root/scenarios/examples/ping_rtt.py"
  cat > "$work/nonjob.json" <<JSON
{"schema_version": 1, "name": "nonjob", "cluster": $(cluster "$dir/inventory.json" "$dir/ssh_config" | sed 's/{/{"nodes": 2, /'),
 "workload": {"kind": "command", "nodes": [0], "argv": ["sh", "-c", "python3 $ping $h1 40 0.2 & python3 $ping $h3 40 0.2; wait"]},
 "faults": [{"name": "slow", "type": "network.delay", "target": {"nodes": [0]}, "at": "2s", "duration": "4s", "delay": "20ms",
             "direction": "both"}],
 "checks": [{"metric": "net/rtt", "stat": "p50", "phase": "fault:slow", "labels": {"peer": "$h1"}, "min": "39ms", "max": "50ms"},
            {"metric": "net/rtt", "stat": "p50", "phase": "fault:slow", "labels": {"peer": "$h3"}, "max": "5ms"}]}
JSON
  ctl "$cb" run "$work/nonjob.json" --out "$work/nonjob" -q >/dev/null 2>"$work/nonjob.err" || tail -5 "$work/nonjob.err"
  check "network.delay on h0: +40 ms to h1 (in the job), nothing to h3 (not in it)" passed "$work/nonjob/results.json"
  check "nothing is left on any host" all_clean
fi

# 3c. Blind diagnosis across hosts (docs/diagnosis.md): the agents run the link mesh and
# their nodes' telemetry. A hidden 4 ms network.delay on h2's interface (both ways) from
# 8 s on must be named from the series alone (faults, phases, metrics removed): NIC node2
# first; and live, within 15 s of the fault.
scenario "$work/blind.json" "$(cluster "$dir/inventory.json" "$dir/ssh_config")" \
  '{"kind": "train", "model": {"layers": [256, 1024, 1024, 16]}, "batch_size": 1024, "steps": 300, "recovery": {"mode": "none"}}' \
  '[{"name": "x-hidden", "type": "network.delay", "target": {"nodes": [2]}, "direction": "both", "delay": "4ms", "at": "8s", "duration": "60s"}]'
ctl "$cb" run "$work/blind.json" --out "$work/blind" -q >/dev/null 2>"$work/blind.err" || tail -5 "$work/blind.err"
check "the agents' mesh measured every pair (12 net/pair_rtt series)" python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))
pairs={(m['labels'].get('src'),m['labels'].get('dst')) for m in r['metrics'] if m['name']=='net/pair_rtt'}
print('  mesh pairs:', len(pairs)); sys.exit(len(pairs) != 12)" "$work/blind/results.json"
check "the agents' node telemetry reached the controller (node/cpu_wait of 4 nodes)" python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))
sys.exit(len({m['labels'].get('node') for m in r['metrics'] if m['name']=='node/cpu_wait'}) != 4)" "$work/blind/results.json"
check "the live diagnosis named a culprit within 15 s of the fault" python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))
v=[m['value'] for m in r['metrics'] if m['name']=='diagnosis/time_to_localise']
print('  live time to localise (s):', v); sys.exit(not (v and v[0] <= 15))" "$work/blind/results.json"
python3 -c "
import json,sys; sys.path.insert(0, sys.argv[3]); from blind_copy import blind_copy
json.dump(blind_copy(json.load(open(sys.argv[1])), {'type': 'network.delay'}), open(sys.argv[2], 'w'))" \
  "$work/blind/results.json" "$work/blind-copy.json" "$root/perf"
"$cb" diagnose "$work/blind-copy.json" --json > "$work/blind-diagnosis.json" 2>&1
check "blind: the first culprit is h2's NIC (nic node2)" python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); top=d['culprits'][0] if d['culprits'] else None
print('  first culprit:', top and (top['class'], top['component'], top['confidence']))
sys.exit(not (top and top['class']=='nic' and top['component']=='node2'))" "$work/blind-diagnosis.json"
check "nothing is left on any host" all_clean

# 3b. An agent SIGKILLed mid-fault cannot clean up after itself: `cleanup --hosts` does,
# from its journal on that host.
if [ "$mode" = ssh ]; then
  ip netns exec "cbtb-$TB_ID-ctl" "$cb" run "$work/kill.json" --out "$work/kill2" -q >/dev/null 2>&1 &
  controller=$!
  for _ in $(seq 100); do grep -q '"fault_applied"' "$work/kill2/timeline.jsonl" 2>/dev/null && break; sleep 0.1; done
  for pid in $(ip netns pids "cbtb-$TB_ID-h1"); do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "chaosbench agent" && kill -9 "$pid"
  done
  kill -9 "$controller"
  wait "$controller" 2>/dev/null
  sleep 1  # the controller's own journal goes with cleanup --hosts below: the test bed shares /run
  check "a SIGKILLed agent leaves its state on h1" test -n "$(leftovers h1)"
  ctl "$cb" cleanup --hosts "$dir/inventory.json" --ssh-config "$dir/ssh_config" --agent-command "$cb" > "$work/cleanup.out" 2>&1
  rc=$?
  [ $rc -eq 0 ] || cat "$work/cleanup.out"
  check "cleanup --hosts exits 0 (got $rc)" test $rc -eq 0
  # The test bed's hosts share one filesystem, /run/chaosbench too: whichever host's
  # cleanup comes first reverts the dead agent's journal (on real hosts, h1's own).
  check "cleanup --hosts reverts the dead agent's run, lines prefixed with the host" grep -q "^h[0-3]: run .*-n1 " "$work/cleanup.out"
  check "after cleanup --hosts nothing is left on any host" all_clean
fi

# 4. Bad input: exit 3, the host named, nothing left.
bad() {  # bad "what" cluster-json expected-text [faults] [command prefix...]
  local what=$1 cl=$2 want=$3 faults=${4:-'[]'}
  shift 4 2>/dev/null || shift $#
  printf '{"schema_version": 1, "name": "agents-bad", "cluster": %s, "workload": %s, "faults": %s}\n' \
    "$cl" "$collective" "$faults" > "$work/bad.json"
  ctl "$@" "$cb" run "$work/bad.json" --out "$work/bad" -q >/dev/null 2>"$work/bad.err"
  local rc=$?
  check "$what: exit 3 (got $rc)" test $rc -eq 3
  check "$what: the message says \"$want\"" grep -q -- "$want" "$work/bad.err"
  check "$what: nothing is left on any host" all_clean
  rm -rf "$work/bad"
}
slow='[{"name": "slow", "type": "network.delay", "target": {"nodes": [2]}, "at": "1s", "duration": "1s", "delay": "5ms"}]'
if [ "$mode" = ssh ]; then
  python3 - "$dir/inventory.json" "$work" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
def put(name, f):
    x = json.loads(json.dumps(inv)); f(x); json.dump(x, open(f"{sys.argv[2]}/{name}", "w"))
put("unreachable.json", lambda x: x[1].update(address=x[1]["address"].rsplit(".", 1)[0] + ".200"))
put("noif.json", lambda x: x[2].update(interfaces=["eth9"]))
PY
  sed "s|IdentityFile .*|IdentityFile $work/stranger|" "$dir/ssh_config" > "$work/stranger_config"
  ssh-keygen -q -t ed25519 -N '' -f "$work/stranger"
  bad "an unreachable host" "$(cluster "$work/unreachable.json" "$dir/ssh_config")" "node 1: ssh to h1"
  bad "a refused key" "$(cluster "$dir/inventory.json" "$work/stranger_config")" "Permission denied"
  bad "a missing binary" "$(cluster "$dir/inventory.json" "$dir/ssh_config" /nonexistent/chaosbench)" "is chaosbench installed there"
  bad "an interface not allowed" "$(cluster "$work/noif.json" "$dir/ssh_config")" "not among the interfaces faults may touch" "$slow"
  # Another chaosbench version: an agent that speaks the link's hello (docs/agent-protocol.md)
  # as version 0.0.9 would.
  cat > "$work/old-chaosbench" <<'PY'
#!/usr/bin/env python3
import json, socket, struct, sys
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
host, port = args["--controller"].rsplit(":", 1)
sys.stdin.readline()
s = socket.create_connection((host, int(port)))
hello = json.dumps({"version": "0.0.9", "run_id": args["--run-id"], "host": args["--host"],
                    "node": int(args["--node"]), "nonce": "0" * 32}).encode()
s.sendall(struct.pack(">I", len(hello) + 1) + bytes([1]) + hello)
# As a real agent does with a refusal: say why on stderr, exit 3.
frame = s.recv(65536)
why = json.loads(frame[5:]).get("why", "?") if len(frame) > 5 and frame[4] == 3 else "no refusal"
print(f"error: agent {args['--host']}: refused: {why}", file=sys.stderr)
sys.exit(3)
PY
  chmod +x "$work/old-chaosbench"
  bad "another chaosbench version" "$(cluster "$dir/inventory.json" "$dir/ssh_config" "$work/old-chaosbench")" \
    "runs chaosbench 0.0.9, the controller"
else
  bad "an allocation of 2 nodes for 4" "$(cluster)" "has 2 nodes; the scenario needs 4" '[]' salloc -N2
  bad "a missing binary" "$(cluster "" "" /nonexistent/chaosbench)" "srun step exited"
  bad "an interface not allowed" "$(cluster | sed 's/"eth0"/"eth9"/')" "not among the interfaces faults may touch" "$slow"
fi

end_checks
echo "all agent checks passed"
