#!/usr/bin/env bash
# `run --grafana URL` against a local stand-in for Grafana's annotations API
# (tests/e2e/grafana_sink.py records every request): each fault occurrence is created at its
# apply (POST /api/annotations, time == timeEnd) and ended at its revert (PATCH
# /api/annotations/ID), with the token as a Bearer header and the fields Grafana
# documents; times match timeline.jsonl. A Grafana that fails the first create gets the
# whole region at the revert; one that fails everything, or is not there, only warns
# (exit 0). The token appears in no output. A bad URL is exit 2.
# Usage: grafana_annotations_test.sh CHAOSBENCH_BINARY. Skips without python3. Stops
# what it started and removes its files on every exit.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: grafana_annotations_test.sh CHAOSBENCH_BINARY}
# shellcheck source=tests/e2e/script_checks.sh
. "$root/tests/e2e/script_checks.sh"
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 0; }
work=$(mktemp -d)
sink_pid=''
cleanup() {
  [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null && wait "$sink_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export CHAOSBENCH_GRAFANA_TOKEN="glsa_test-token-$$"

cat > "$work/s.json" <<'JSON'
{"schema_version": 1, "name": "grafana-annotations", "cluster": {"nodes": 1},
 "workload": {"kind": "command", "argv": ["/bin/sleep", "2.5"]},
 "faults": [{"name": "first", "type": "marker", "at": "300ms", "duration": "800ms"},
            {"name": "second", "type": "marker", "at": "1500ms", "duration": "500ms"}]}
JSON

# start_sink NAME [sink options]: a sink logging to $work/NAME.jsonl; sets $sink_pid, $sink_port.
start_sink() {
  local name=$1
  shift
  rm -f "$work/$name.port"
  python3 "$root/tests/e2e/grafana_sink.py" "$work/$name.port" "$work/$name.jsonl" "$@" &
  sink_pid=$!
  for _ in $(seq 50); do [ -s "$work/$name.port" ] && break; sleep 0.1; done
  sink_port=$(cat "$work/$name.port")
}
stop_sink() { kill "$sink_pid" 2>/dev/null; wait "$sink_pid" 2>/dev/null; sink_pid=; }
# run NAME URL: a run of the scenario into $work/NAME with --grafana URL; sets $rc.
run() {
  "$bin" run "$work/s.json" --out "$work/$1" --quiet --grafana "$2" >"$work/$1.out" 2>"$work/$1.err"
  rc=$?
}

start_sink ok
run ok "http://127.0.0.1:$sink_port/"
stop_sink
check "the run passed (exit 0, got $rc)" test "$rc" -eq 0
check "the requests follow Grafana's annotations API" \
  python3 - "$work/ok.jsonl" "$work/ok/timeline.jsonl" "$work/ok/results.json" "$CHAOSBENCH_GRAFANA_TOKEN" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
timeline = [json.loads(l) for l in open(sys.argv[2])]
run_id = json.load(open(sys.argv[3]))["run_id"]
token = sys.argv[4]
wall0 = next(e["wall"] for e in timeline if e["event"] == "workload_started")
applied = {e["fault"]: wall0 + e["t"] for e in timeline if e["event"] == "fault_applied"}
reverted = {e["fault"]: wall0 + e["t"] for e in timeline if e["event"] == "fault_reverted"}
bad = []
def expect(cond, what):
    if not cond:
        bad.append(what)
posts = [r for r in log if r["method"] == "POST"]
patches = [r for r in log if r["method"] == "PATCH"]
expect(len(posts) == 2 and len(patches) == 2, f"2 POSTs and 2 PATCHes, got {[(r['method'], r['path']) for r in log]}")
for r in log:
    h = {k.lower(): v for k, v in r["headers"].items()}
    expect(h.get("authorization") == f"Bearer {token}", "the token as a Bearer header")
    expect(h.get("content-type") == "application/json", "JSON bodies")
ids = {}
for n, r in enumerate(posts):
    b = r["body"]
    expect(r["path"] == "/api/annotations", f"POST path {r['path']}")
    expect(isinstance(b.get("time"), int) and b.get("timeEnd") == b.get("time"), f"time == timeEnd (ms) at the apply: {b}")
    expect(b["tags"][:2] == ["chaosbench", "marker"] and run_id in b["tags"], f"tags {b['tags']}")
    fault = "first" if "first" in b["text"] else "second"
    expect(abs(b["time"] / 1000 - applied[fault]) < 0.05, f"{fault}: time {b['time']} vs applied {applied[fault]:.3f}")
    ids[101 + n] = (fault, b["time"])
for r in patches:
    aid = int(r["path"].rsplit("/", 1)[1])
    expect(aid in ids, f"PATCH of a created id: {r['path']}")
    fault, start = ids.get(aid, ("?", 0))
    b = r["body"]
    expect(b.get("time") == start and b["timeEnd"] > b["time"], f"{fault}: the region's end after its start: {b}")
    if fault in reverted:
        expect(abs(b["timeEnd"] / 1000 - reverted[fault]) < 0.05, f"{fault}: timeEnd vs reverted {reverted[fault]:.3f}")
for what in bad:
    print("  " + what)
sys.exit(1 if bad else 0)
PY
check "the token is in no output" bash -c "! grep -rqF '$CHAOSBENCH_GRAFANA_TOKEN' '$work/ok.out' '$work/ok.err' '$work/ok'"
check "the timeline counts the annotations" grep -q '"event":"grafana_annotations".*"sent":4' "$work/ok/timeline.jsonl"

# The first create fails: the first fault's region goes whole at its revert.
start_sink retry --fail-first 1
run retry "http://127.0.0.1:$sink_port"
stop_sink
check "a failed create still passes (exit 0, got $rc)" test "$rc" -eq 0
check "and the region is created whole at the revert" python3 - "$work/retry.jsonl" <<'PY'
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
methods = [r["method"] for r in log]
whole = [r["body"] for r in log[1:] if r["method"] == "POST" and r["body"]["timeEnd"] > r["body"]["time"]]
sys.exit(0 if methods == ["POST", "POST", "POST", "PATCH"] and len(whole) == 1 and "first" in whole[0]["text"] else 1)
PY
check "with a warning" grep -q "creating the annotation of fault first.*answered HTTP 500" "$work/retry.err"

# Everything fails, or nothing listens: warnings, exit 0.
start_sink fail --fail-all
run fail "http://127.0.0.1:$sink_port"
stop_sink
check "a failing Grafana only warns (exit 0, got $rc)" test "$rc" -eq 0
check "the timeline has the failures" grep -q '"event":"grafana_annotation_failed"' "$work/fail/timeline.jsonl"
check "and the warning says HTTP 500" grep -q "answered HTTP 500" "$work/fail.err"
run refused "http://127.0.0.1:$sink_port"
check "a Grafana that is not there only warns (exit 0, got $rc)" test "$rc" -eq 0
check "the token is in no warning" bash -c "! grep -rqF '$CHAOSBENCH_GRAFANA_TOKEN' '$work/fail.err' '$work/refused.err' '$work/fail' '$work/refused'"

"$bin" run "$work/s.json" --out "$work/bad" --quiet --grafana "ftp://grafana:3000" >/dev/null 2>"$work/bad.err"
check "a URL that is not http(s) is a usage error (exit 2)" test $? -eq 2
"$bin" run "$work/s.json" --out "$work/bad" --quiet --grafana-dashboard abc >/dev/null 2>&1
check "--grafana-dashboard without --grafana is a usage error (exit 2)" test $? -eq 2
check "neither made a run directory" test ! -e "$work/bad"
end_checks
