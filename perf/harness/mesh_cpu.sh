#!/usr/bin/env bash
# What the link mesh costs the machine, measured where nothing else moves: an idle
# namespaced cluster (every rank sleeps) run with the mesh off ("mesh": false) and on at
# each rate asked, alternating, each run `--seconds` of workload. Per run: the CPU time
# of the whole run (the harness and everything it started, user + system, from
# getrusage of the finished child: the probes' kernel work in the mesh thread's own
# syscalls included) over its wall time, and for "on" runs the mesh thread's own CPU time
# (timeline event mesh_stopped). Prints per rate: probes a second, the run's CPU share on
# and off (medians) and the difference as a share of the machine, and the mesh thread's
# share. The A/B of a busy workload (perf/harness/mesh_cost.sh) cannot resolve a 1 % cost on a
# 2-core VM whose run-to-run noise is tens of percent; this bounds what the mesh can
# take from a CPU-bound workload.
#   perf/harness/mesh_cpu.sh [--nodes N] [--rates "10 100"] [--seconds S] [--repeats K]
# Needs a build (scripts/build.sh) and root (namespaces); CHAOSBENCH picks another binary.
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
nodes=8 rates="10 100" seconds=20 repeats=3
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    -h|--help) sed -n '2,/^# Needs/p' "$perf_script" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mesh_cpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
perf_need_root "network namespaces"
python3 - "$cb" "$tmp" "$nodes" "$rates" "$seconds" "$repeats" "$(nproc)" <<'EOF'
import json, resource, statistics, subprocess, sys, time
cb, tmp, nodes, rates, seconds, repeats, cpus = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(), sys.argv[5], int(sys.argv[6]), int(sys.argv[7])

def run(label, mesh):
  s = {"schema_version": 1, "name": "mesh-cpu", "timeout": "120s", "cluster": {"nodes": nodes, "mode": "namespaces"},
       "workload": {"kind": "command", "argv": ["sleep", seconds]}, "mesh": mesh}
  path, out = f"{tmp}/{label}.json", f"{tmp}/{label}"
  json.dump(s, open(path, "w"))
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  t0 = time.monotonic()
  p = subprocess.run([cb, "run", path, "--out", out, "--quiet"], capture_output=True, text=True)
  wall = time.monotonic() - t0
  after = resource.getrusage(resource.RUSAGE_CHILDREN)
  if p.returncode != 0:
    sys.exit(f"mesh_cpu.sh: run {label} exited {p.returncode}: {p.stderr.strip()[-300:]}")
  cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
  thread = float("nan")
  for line in open(f"{out}/timeline.jsonl"):
    e = json.loads(line)
    if e.get("event") == "mesh_stopped" and e.get("wall_s"): thread = e["cpu_s"] / e["wall_s"]
  return cpu / wall, thread

share = {"off": []}
thread = {}
for k in range(repeats):
  share["off"].append(run(f"off-{k}", False)[0])
  for r in rates:
    a, b = run(f"on{r}-{k}", {"rate": float(r)})
    share.setdefault(r, []).append(a)
    thread.setdefault(r, []).append(b)
off = statistics.median(share["off"])
print(f"{nodes} nodes, {cpus} CPUs, {repeats} runs each; mesh off: the run used {100 * off / cpus:.3f} % of the machine (median)")
for r in rates:
  on = statistics.median(share[r])
  th = statistics.median(thread[r])
  pps = float(r) * nodes * (nodes - 1)
  print(f"rate {r}: {pps:.0f} probes/s and as many echoes; the run used {100 * on / cpus:.3f} % of the machine, "
        f"{100 * (on - off) / cpus:+.3f} % against off; the mesh thread {100 * th / cpus:.3f} % "
        f"({100 * th / cpus / pps * 1000:.3f} % per 1,000 probes/s)")
EOF
