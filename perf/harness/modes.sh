#!/usr/bin/env bash
# The same scenarios in every cluster mode, their key metrics side by side: the 4-node
# collective sweep (scenarios/collective-sweep.json), train-node-kill with restart and
# with elastic recovery, and a ping under network.delay 20ms (scenarios/ping-delay.json),
# each run in "namespaces", "ssh" (4 test bed hosts, real sshd) and "slurm" (the same
# hosts under Debian's slurmctld/slurmd), changing only `cluster` (--set). Every run must
# pass; the table shows how far the modes agree. One command:
#   perf/harness/modes.sh [SCENARIO...]   (default: all four; CHAOSBENCH=path: another binary)
# Needs root, a build and the test bed's packages (scripts/bootstrap.sh). ~6 minutes.
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "network namespaces, the test bed"
bed="$tmp/bed"
perf_on_exit "scripts/testbed.sh down $(printf %q "$bed") >/dev/null 2>&1"
scripts/testbed.sh up "$bed" 4 --slurm >/dev/null
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(collective-sweep train-node-kill train-node-kill-elastic ping-delay)

mode_args() {  # the --set arguments that put a scenario in mode $1
  case "$1" in
    namespaces) echo "--set cluster.mode=namespaces" ;;
    ssh) echo "--set cluster.mode=ssh --set cluster.hosts=$bed/inventory.json --set cluster.ssh.config=$bed/ssh_config --set cluster.agent.command=$cb" ;;
    slurm) echo "--set cluster.mode=slurm --set cluster.slurm.interfaces=[\"eth0\"] --set cluster.agent.command=$cb" ;;
  esac
}

for s in "${scenarios[@]}"; do
  for mode in namespaces ssh slurm; do
    out="$tmp/$s-$mode"
    # shellcheck disable=SC2046
    if ! scripts/testbed.sh ctl "$bed" "$cb" run "$perf_root/scenarios/$s.json" $(mode_args "$mode") --out "$out" -q \
         >/dev/null 2>"$out.err"; then
      echo "$s in $mode mode did not pass:"; tail -5 "$out.err"
    fi
  done
done

python3 - "$tmp" "${scenarios[@]}" <<'PY'
import json, os, statistics, sys
tmp, names = sys.argv[1], sys.argv[2:]
modes = ["namespaces", "ssh", "slurm"]

def load(s, m):
    p = f"{tmp}/{s}-{m}/results.json"
    return json.load(open(p)) if os.path.exists(p) else None

def pick(r, name, stat="value", **labels):
    for x in r["metrics"] if r else []:
        if x["name"] == name and all(str(x["labels"].get(k)) == str(v) for k, v in labels.items()):
            return x["stats"][stat] if stat != "value" else x["value"]
    return None

rows = {
    "collective-sweep": [("busbw allreduce ring 16MiB (GB/s)", "comm/busbw", "value", dict(collective="allreduce", algorithm="ring", bytes=16777216, phase="overall")),
                         ("busbw allgather ring 1MiB (GB/s)", "comm/busbw", "value", dict(collective="allgather", algorithm="ring", bytes=1048576, phase="overall")),
                         ("latency p50 allreduce ring 1KiB (us)", "comm/latency", "p50", dict(collective="allreduce", algorithm="ring", bytes=1024, phase="overall"))],
    "train-node-kill": [("time_to_recover (s)", "resilience/time_to_recover", "value", {}), ("lost_steps", "resilience/lost_steps", "value", {}),
                        ("restarts", "resilience/restarts", "value", {}), ("throughput (samples/s)", "train/throughput", "value", dict(phase="baseline"))],
    "train-node-kill-elastic": [("time_to_recover (s)", "resilience/time_to_recover", "value", {}), ("lost_steps", "resilience/lost_steps", "value", {}),
                                ("throughput (samples/s)", "train/throughput", "value", dict(phase="baseline"))],
    "ping-delay": [("rtt p50 baseline (ms)", "net/rtt", "p50", dict(phase="baseline")), ("rtt p50 under 20ms delay (ms)", "net/rtt", "p50", dict(phase="fault:slow")),
                   ("rtt p50 after (ms)", "net/rtt", "p50", dict(phase="recovery:slow"))],
}
for s in names:
    rs = {m: load(s, m) for m in modes}
    print(f"\n{s}: " + "  ".join(f"{m} {rs[m]['verdict'] if rs[m] else 'no result'}" for m in modes))
    print(f"  {'metric':40} " + " ".join(f"{m:>12}" for m in modes) + "   ssh/ns  slurm/ns")
    for label, name, stat, labels in rows.get(s, []):
        v = [pick(rs[m], name, stat, **labels) for m in modes]
        fmt = lambda x: f"{x:12.4g}" if isinstance(x, (int, float)) else f"{'-':>12}"
        ratio = lambda a, b: f"{a / b:7.2f}" if isinstance(a, (int, float)) and b else "      -"
        print(f"  {label:40} " + " ".join(fmt(x) for x in v) + f"  {ratio(v[1], v[0])}  {ratio(v[2], v[0])}")
PY
