#!/usr/bin/env bash
# Stop conditions end to end on real namespaces, replicas and packet loss
# (scenarios/serve-loss-abort.json):
#   1. with `abort`: the error rate's stop condition ends the run with exit 4 within
#      abort.for + the probe's interval + 1 s of the loss starting (timeline.jsonl), the
#      reports say aborted with the probe's evidence, and no rule, qdisc, namespace or
#      journal of the run remains;
#   2. the same scenario without `abort` runs to its end, the loss reverted on time;
#   3. a `before` probe that fails (nothing answers where it asks) skips every fault and
#      the verdict says why.
# Usage: abort_test.sh CHAOSBENCH. Skips (with the reason) without root or namespaces.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cb=$(realpath "${1:?usage: abort_test.sh CHAOSBENCH}")
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces, iptables)"; exit 0; }
unshare -n true 2>/dev/null || { echo "skipped: cannot make network namespaces here"; exit 0; }
tmp=$(mktemp -d /tmp/cb-abort-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
scenario="$root/scenarios/serve-loss-abort.json"
fail=0
bad() { echo "FAILED: $*"; fail=1; }

# Writes a copy of the scenario with a Python expression applied to it (s: the dict).
variant() {
  python3 - "$scenario" "$1" "$2" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(s, open(sys.argv[2], "w"), indent=1)
EOF
}

# Prints "KEY VALUE" lines about a run directory's timeline and results (python3).
facts() {
  python3 - "$1" <<'EOF'
import json, sys
d = sys.argv[1]
ev = [json.loads(l) for l in open(d + "/timeline.jsonl")]
first = lambda name, **kw: next((e for e in ev if e["event"] == name and all(e.get(k) == v for k, v in kw.items())), None)
r = json.load(open(d + "/results.json"))
loss = first("fault_applied", fault="lossy-replicas")
out = {
  "verdict": r["verdict"],
  "loss_at": loss["t"] if loss else "none",
  "loss_reverted_at": (first("fault_reverted", fault="lossy-replicas") or {}).get("t", "none"),
  "abort_at": (first("abort") or {}).get("t", "none"),
  "reverted_at": (first("abort_faults_reverted") or {}).get("t", "none"),
  "finished_at": first("run_finished")["t"],
  "skipped": sum(1 for e in ev if e["event"] == "fault_skipped"),
  "abort_cause": (r.get("abort") or {}).get("cause", "none"),
  "netns": " ".join((first("cluster_up") or {}).get("netns", [])),
  "run_id": r["run_id"],
}
for k, v in out.items(): print(k, v)
print("reason", r["reason"].replace("\n", " "))
EOF
}
get() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$2"; }

# What a run could leave: its namespaces held by a process, NFQUEUE rules or qdiscs in
# this namespace, its journal.
leftovers() {
  local f=$1 id
  for id in $(get netns "$f"); do
    for ns in /proc/[0-9]*/ns/net; do
      [ "$(readlink "$ns" 2>/dev/null)" = "$id" ] && echo "namespace $id still held by ${ns%/ns/net}"
    done
  done
  iptables-save 2>/dev/null | grep -i -E 'NFQUEUE|chaosbench' | sed 's/^/rule: /'
  tc qdisc show 2>/dev/null | grep -E 'netem|htb' | sed 's/^/qdisc: /'
  local journal="${CHAOSBENCH_JOURNAL_DIR:-/run/chaosbench}/$(get run_id "$f").journal"
  [ -e "$journal" ] && echo "journal $journal"
}

# 1. The stop condition.
start=$(date +%s.%N)
"$cb" run "$scenario" --out "$tmp/abort" --quiet >"$tmp/abort.log" 2>&1
rc=$?
exited=$(date +%s.%N)
facts "$tmp/abort" >"$tmp/abort.facts" || { cat "$tmp/abort.log"; bad "no results from the aborted run"; exit 1; }
cat "$tmp/abort.facts"
[ "$rc" -eq 4 ] || { bad "aborted run: exit $rc, expected 4"; tail -20 "$tmp/abort.log"; }
[ "$(get verdict "$tmp/abort.facts")" = aborted ] || bad "verdict is not aborted"
[ "$(get abort_cause "$tmp/abort.facts")" = error-rate ] || bad "the abort's cause is not the error-rate probe"
get reason "$tmp/abort.facts" | grep -q "error-rate failed for" || bad "the reason lacks the probe's evidence"
python3 - "$tmp/abort.facts" "$start" "$exited" <<'EOF' || fail=1
import sys
f = dict(l.rstrip("\n").split(" ", 1) for l in open(sys.argv[1]))
loss, fin = float(f["loss_at"]), float(f["finished_at"])
bound = 3 + 1 + 1  # abort.for + the probe's interval + 1 s
print(f"loss at {loss:.2f}s, abort decided {float(f['abort_at']) - loss:.2f}s later, faults reverted "
      f"{(float(f['reverted_at']) - float(f['abort_at'])) * 1000:.1f} ms after that, run finished "
      f"{fin - loss:.2f}s after the loss (bound {bound}s); process ran {float(sys.argv[3]) - float(sys.argv[2]):.1f}s")
if fin - loss > bound: print(f"FAILED: the run finished {fin - loss:.2f}s after the loss started, more than {bound}s"); sys.exit(1)
EOF
grep -q "<error" "$tmp/abort/junit.xml" || bad "junit.xml has no <error> for the aborted run"
left=$(leftovers "$tmp/abort.facts")
[ -z "$left" ] || bad "left after the aborted run: $left"

# 2. Without the stop condition the same scenario runs to its end.
variant "$tmp/no-abort.json" 's.pop("abort")'
"$cb" run "$tmp/no-abort.json" --out "$tmp/full" --quiet >"$tmp/full.log" 2>&1
rc=$?
facts "$tmp/full" >"$tmp/full.facts" || { bad "no results from the run without abort"; exit 1; }
[ "$rc" -eq 0 ] || { bad "run without abort: exit $rc, expected 0"; tail -20 "$tmp/full.log"; }
python3 - "$tmp/full.facts" <<'EOF' || fail=1
import sys
f = dict(l.rstrip("\n").split(" ", 1) for l in open(sys.argv[1]))
print(f"without abort: loss {float(f['loss_at']):.2f}s .. {float(f['loss_reverted_at']):.2f}s, finished {float(f['finished_at']):.2f}s, verdict {f['verdict']}")
if f["abort_at"] != "none" or float(f["finished_at"]) < 29: print("FAILED: the run without abort did not run to its end"); sys.exit(1)
if abs(float(f["loss_reverted_at"]) - float(f["loss_at"]) - 15) > 0.5: print("FAILED: the loss did not last its 15 s"); sys.exit(1)
EOF
left=$(leftovers "$tmp/full.facts")
[ -z "$left" ] || bad "left after the full run: $left"

# 3. A before probe that fails: nothing listens on port 8009 of replica 0.
variant "$tmp/not-steady.json" 's.pop("abort"); s["probes"][0]["url"] = "http://{node.0.addr}:8009/v2/health/ready"; s["workload"]["load"]["duration"] = "12s"'
"$cb" run "$tmp/not-steady.json" --out "$tmp/unsteady" --quiet >"$tmp/unsteady.log" 2>&1
rc=$?
facts "$tmp/unsteady" >"$tmp/unsteady.facts" || { bad "no results from the not-steady run"; exit 1; }
[ "$rc" -eq 1 ] || bad "not-steady run: exit $rc, expected 1"
[ "$(get loss_at "$tmp/unsteady.facts")" = none ] || bad "a fault was applied although the system was not steady"
[ "$(get skipped "$tmp/unsteady.facts")" -ge 1 ] || bad "no fault_skipped event"
get reason "$tmp/unsteady.facts" | grep -q "not steady.*replica-ready" || bad "the verdict does not say why: $(get reason "$tmp/unsteady.facts")"
echo "not steady: $(get reason "$tmp/unsteady.facts")"

[ "$fail" -eq 0 ] && echo "abort test: all passed"
exit "$fail"
