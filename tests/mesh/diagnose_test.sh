#!/usr/bin/env bash
# `chaosbench diagnose` end to end, blind (docs/diagnosis.md): a 4-node trainer
# with a hidden 4 ms network.delay on the link [1, 3] (both directions) from 8 s to its end.
# The fault list, schedule, phases, metrics and checks are removed from results.json; the
# diagnosis of what is left must name the link node1-node3 first, class "link"; the live
# diagnosis must have named it too (diagnosis/time_to_localise within 15 s of the fault's
# start in the full results.json). Also: a file that is not results.json is exit 2, with
# the file named. Exit 0 pass, 1 fail; skips (exit 0, the reason) without root or
# network namespaces.
# Usage: diagnose_test.sh [CHAOSBENCH]   (default build/bin/chaosbench)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cb=$(realpath "${1:-$root/build/bin/chaosbench}")
[ -x "$cb" ] || { echo "FAILED: no chaosbench binary at $cb"; exit 1; }
tmp=$(mktemp -d /tmp/cb-diagnose.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

echo '{"not": "results"' > "$tmp/bad.json"
"$cb" diagnose "$tmp/bad.json" > "$tmp/bad.out" 2>&1
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "bad.json" "$tmp/bad.out"; then
  echo "FAILED: diagnose of a broken file: exit $rc (want 2, naming the file): $(cat "$tmp/bad.out")"
  fail=1
fi

[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces)"; exit "$fail"; }
unshare -n true 2>/dev/null || { echo "skipped: cannot make network namespaces here"; exit "$fail"; }

cat > "$tmp/s.json" <<'EOF'
{"schema_version": 1, "name": "diagnose-link", "timeout": "120s",
 "cluster": {"nodes": 4, "mode": "namespaces"},
 "workload": {"kind": "train", "model": {"layers": [256, 1024, 1024, 16]}, "batch_size": 1024, "steps": 400,
              "recovery": {"mode": "none"}},
 "faults": [{"name": "hidden", "type": "network.delay", "target": {"links": [[1, 3]]}, "direction": "both",
             "delay": "4ms", "at": "8s", "duration": "60s"}]}
EOF
if ! "$cb" run "$tmp/s.json" --out "$tmp/run" --quiet > "$tmp/run.log" 2>&1; then
  echo "FAILED: the run failed: $(tail -5 "$tmp/run.log")"
  exit 1
fi
python3 - "$tmp/run/results.json" "$tmp/blind.json" <<'EOF' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
ttl = [m["value"] for m in r["metrics"] if m["name"] == "diagnosis/time_to_localise"]
print(f"live: diagnosis/time_to_localise {ttl}")
for k in ("faults", "schedule", "phases", "metrics", "checks"):
    r.pop(k, None)
if isinstance(r.get("scenario"), dict):
    r["scenario"].pop("faults", None)
r["events"] = [e for e in r.get("events", []) if not e["name"].startswith("fault")]
json.dump(r, open(sys.argv[2], "w"))
if not ttl or ttl[0] > 15:
    print("FAILED: the live diagnosis did not name a culprit within 15 s of the fault")
    sys.exit(1)
EOF
"$cb" diagnose "$tmp/blind.json" > "$tmp/d.txt" 2>&1
"$cb" diagnose "$tmp/blind.json" --json > "$tmp/d.json" 2>&1 || { echo "FAILED: diagnose --json: $(cat "$tmp/d.json")"; exit 1; }
cat "$tmp/d.txt"
python3 - "$tmp/d.json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
top = d["culprits"][0] if d["culprits"] else None
if not top or top["class"] != "link" or top["component"] != "node1-node3":
    print(f"FAILED: the first culprit is {top and (top['class'], top['component'])}, want ('link', 'node1-node3')")
    sys.exit(1)
print(f"first culprit: {top['class']} {top['component']}, confidence {top['confidence']}, named at {top['first_named_s']} s")
EOF
[ "$fail" -eq 0 ] && echo "diagnose: all passed"
exit "$fail"
