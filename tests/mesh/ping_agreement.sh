#!/usr/bin/env bash
# The link mesh's round trip against the system ping between the same namespaces (docs/diagnosis.md):
# a 3-node namespaced cluster whose rank on node 0 runs `ping -n -c 100 -i 0.1 node1` (10 s;
# the ranks on nodes 1 and 2 sleep as long), in two runs:
#   1. idle: the median of the mesh's net/pair_rtt {src node0, dst node1} (ms, one value a
#      second: the median of that second's probes) within 0.1 ms of the median of ping's
#      100 replies;
#   2. network.delay 5ms on the link [0, 1], direction egress (what node 0 sends to node 1;
#      the round trip gains the delay once), in effect from the workload's start to its end:
#      the two medians within 5 % of ping's.
# Prints both medians and the difference per run. Exit 0 pass, 1 fail.
# Usage: ping_agreement.sh [CHAOSBENCH]   (default build/bin/chaosbench). Skips (with the
# reason, exit 0) without root, network namespaces or ping.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cb=$(realpath "${1:-$root/build/bin/chaosbench}")
[ -x "$cb" ] || { echo "FAILED: no chaosbench binary at $cb"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces)"; exit 0; }
unshare -n true 2>/dev/null || { echo "skipped: cannot make network namespaces here"; exit 0; }
command -v ping >/dev/null || { echo "skipped: no ping on PATH"; exit 0; }
tmp=$(mktemp -d /tmp/cb-ping-agreement.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# Writes the scenario: $1 the file, $2 "idle" or "delay".
scenario() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
path, variant = sys.argv[1], sys.argv[2]
s = {
  "schema_version": 1,
  "name": f"ping-agreement-{variant}",
  "description": "ping node0 -> node1, 100 replies 0.1 s apart, beside the link mesh",
  "timeout": "90s",
  "cluster": {"nodes": 3, "mode": "namespaces"},
  "workload": {
    "kind": "command",
    "argv": ["sh", "-c", "if [ {node} = 0 ]; then exec ping -n -c 100 -i 0.1 node1; else exec sleep 10.5; fi"],
  },
}
if variant == "delay":
  s["faults"] = [{"name": "slow-link", "type": "network.delay", "target": {"links": [[0, 1]]},
                  "direction": "egress", "delay": "5ms", "at": "0s", "duration": "10m"}]
json.dump(s, open(path, "w"), indent=1)
EOF
}

# Compares the two medians of run directory $1; $2 "idle" or "delay".
compare() {
  python3 - "$1" "$2" <<'EOF'
import json, re, statistics, sys
d, variant = sys.argv[1], sys.argv[2]
text = open(f"{d}/logs/rank0.out").read()
ping = [float(x) for x in re.findall(r"icmp_seq=\d+ ttl=\d+ time=([0-9.]+) ms", text)]
if len(ping) < 50:
  print(f"FAILED: {variant}: only {len(ping)} ping replies in {d}/logs/rank0.out")
  sys.exit(1)
r = json.load(open(f"{d}/results.json"))
# The delayed run: only the mesh's seconds that lie wholly inside the fault's window (it is
# applied a moment after the workload starts; the ping's first reply or two are earlier,
# too few to move its median).
since = 0.0
if variant == "delay":
  applied = [f.get("applied_at_s") for f in r.get("faults", []) if f.get("name") == "slow-link"]
  if not applied or applied[0] is None:
    print(f"FAILED: {variant}: the delay was never applied (results.json faults)")
    sys.exit(1)
  since = applied[0] + 1.0
series = [s for s in r.get("series", []) if s.get("name") == "net/pair_rtt"
          and s.get("labels", {}).get("src") == "node0" and s.get("labels", {}).get("dst") == "node1"]
mesh = [v for s in series for t, v in zip(s.get("t", []), s.get("v", [])) if v is not None and t >= since]
p = statistics.median(ping)
print(f"{variant}: ping median {p:.3f} ms over {len(ping)} replies (min {min(ping):.3f}, max {max(ping):.3f})")
if not series:
  print(f"FAILED: {variant}: no net/pair_rtt series for node0->node1 in results.json")
  sys.exit(1)
if not mesh:
  print(f"FAILED: {variant}: the net/pair_rtt series for node0->node1 has no value from {since:.1f} s on")
  sys.exit(1)
m = statistics.median(mesh)
diff = m - p
if variant == "idle":
  ok, bound = abs(diff) <= 0.1, "|mesh - ping| <= 0.1 ms"
else:
  ok, bound = abs(diff) / p <= 0.05, "|mesh - ping| / ping <= 5 %"
print(f"{variant}: mesh median {m:.3f} ms over {len(mesh)} seconds; mesh - ping {diff:+.3f} ms "
      f"({100 * diff / p:+.1f} %); {bound}: {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
EOF
}

for variant in idle delay; do
  scenario "$tmp/$variant.json" "$variant"
  "$cb" run "$tmp/$variant.json" --out "$tmp/$variant" --quiet >"$tmp/$variant.log" 2>&1
  rc=$?
  if [ ! -f "$tmp/$variant/results.json" ]; then
    echo "FAILED: $variant: no results.json (chaosbench run exited $rc)"; tail -20 "$tmp/$variant.log"; fail=1; continue
  fi
  [ "$rc" -eq 0 ] || { echo "FAILED: $variant: chaosbench run exited $rc"; tail -20 "$tmp/$variant.log"; fail=1; }
  compare "$tmp/$variant" "$variant" || fail=1
done

[ "$fail" -eq 0 ] && echo "ping agreement: all passed"
exit "$fail"
