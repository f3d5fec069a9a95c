#!/usr/bin/env bash
# `run --repeat N` end to end, on local processes (no root needed): each run in its own
# directory with its reports, the combined results.json (repeat, per-run figures), the
# run-level gate with --baseline and with --interleave (ABBA into OUT/baseline/), compare
# over two combined results, and the usage errors (exit 2, nothing run).
#   tests/e2e/repeat_run_test.sh CHAOSBENCH PYTHON
set -euo pipefail
bin=$1 python=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat >"$out/s.json" <<'JSON'
{ "schema_version": 1, "name": "repeat-test", "cluster": { "nodes": 2, "mode": "local" },
  "workload": { "kind": "collective", "collectives": ["allreduce"], "algorithms": ["ring"],
                "sizes": { "min": "4KiB", "max": "64KiB", "factor": 16 }, "warmup_iters": 2, "iters": 30 },
  "checks": [ { "metric": "comm/wrong_elements", "max": 0 } ] }
JSON

expect_usage() {  # what, args...
  local what=$1 rc=0 err
  shift
  err=$("$bin" run "$out/s.json" --out "$out/never" "$@" 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq 2 ] || { echo "$what: exit $rc, expected 2"; exit 1; }
  [ ! -e "$out/never" ] || { echo "$what: left $out/never behind"; exit 1; }
  echo "$what: exit 2: $(head -n 1 <<<"$err")"
}
expect_usage "--repeat 0" --repeat 0
expect_usage "--interleave without --repeat" --interleave "$out/s.json"
expect_usage "--interleave and --baseline" --repeat 2 --interleave "$out/s.json" --baseline "$out/s.json"
expect_usage "--interleave of a missing file" --repeat 2 --interleave "$out/missing.json"

"$bin" run "$out/s.json" --repeat 3 --out "$out/a" --quiet >/dev/null
"$bin" run "$out/s.json" --repeat 3 --out "$out/b" --baseline "$out/a/results.json" --quiet >/dev/null || true
"$bin" run "$out/s.json" --repeat 3 --out "$out/i" --interleave "$out/s.json" --quiet >/dev/null || true
"$bin" compare "$out/a/results.json" "$out/b/results.json" --json >"$out/compare.json"

"$python" - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
for side in ("a", "b", "i", "i/baseline"):
    r = json.load(open(f"{out}/{side}/results.json"))
    rep = r["repeat"]
    assert rep["count"] == 3 and len(rep["runs"]) == 3, (side, rep)
    assert rep["interleaved"] == side.startswith("i"), (side, rep)
    assert r["run_id"] == rep["runs"][0]["run_id"] + "-x3", r["run_id"]  # unique, for a history
    for run in rep["runs"]:
        d = f"{out}/{side}/{run['dir']}"
        for f in ("results.json", "report.html", "summary.md", "junit.xml"):
            assert os.path.isfile(f"{d}/{f}"), (d, f)
        assert json.load(open(f"{d}/results.json"))["run_id"] == run["run_id"]
    for f in ("report.html", "summary.md", "junit.xml", "trace.json"):
        assert os.path.isfile(f"{out}/{side}/{f}"), (side, f)
    assert r["series"] == [] and r["metrics"], side
    lat = [m for m in r["metrics"] if m["name"] == "comm/latency" and m["labels"]["phase"] == "overall"]
    assert lat and all(len(m["runs"]["p50"]) == 3 and len(m["runs"]["value"]) == 3 for m in lat), side
    for m in lat:  # value and p50: the median over the runs
        assert sorted(m["runs"]["p50"])[1] == m["stats"]["p50"], m
    assert "Combined: medians of 3 runs" in open(f"{out}/{side}/summary.md").read(), side
for side in ("b", "i"):
    c = json.load(open(f"{out}/{side}/results.json"))["comparison"]
    assert c["metrics"] and all(m["basis"] == "runs" for m in c["metrics"]), side
    assert all(m["n_baseline"] == 3 and m["n_current"] == 3 and len(m["current_points"]) == 3 for m in c["metrics"]), side
c = json.load(open(f"{out}/compare.json"))
busbw = [m for m in c["metrics"] if m["name"] == "comm/busbw"]
assert busbw and all(m["basis"] == "runs" and m["p_value"] is not None for m in busbw), busbw
print(f"repeat: 4 combined results of 3 runs each; {len(c['metrics'])} run-level rows compared")
PY
