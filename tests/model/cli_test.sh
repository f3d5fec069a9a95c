#!/usr/bin/env bash
# `chaosbench model goodput` from the command line, on the hand-made soak results
# (tests/model/soak-results.json): the table with the run's prediction line and the inputs'
# provenance, --json that parses with its documented keys, --html written with its charts,
# and bad inputs refused with exit 2 and a message naming what is wrong.
#   tests/model/cli_test.sh CHAOSBENCH [PYTHON]
set -euo pipefail
bin=$1
python=${2:-python3}
here=$(cd "$(dirname "$0")" && pwd)
fixture=$here/soak-results.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v "$python" >/dev/null || { echo "skipped: no $python to read --json"; exit 0; }

# shellcheck source=tests/e2e/cli_expect.sh
. "$(dirname "${BASH_SOURCE[0]}")/../e2e/cli_expect.sh"

small=(--trials 300 --nodes 1,64,4096)

expect 0 "$bin" model goodput "$fixture" "${small[@]}" --html "$work/page.html"
grep_out "measured goodput"
grep_out "95% prediction interval"
grep_out "for N=4, MTBF 30 s"
grep_out "1st-order valid"
grep_out "4*"
grep_out "measured"
grep_out "resilience/time_lost{part=restart}: median of 4 failures"
grep_out "Llama 3 405B"
grep_out "Assumptions:"
grep -qF "<svg" "$work/page.html" || { echo "FAIL: no <svg in the page"; exit 1; }
[ "$(grep -o "<svg" "$work/page.html" | wc -l)" = 2 ] || { echo "FAIL: expected two charts"; exit 1; }

expect 0 "$bin" model goodput "$fixture" "${small[@]}" --json
"$python" - "$work/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1 and d["model"] == "goodput", d.keys()
assert [r["nodes"] for r in d["rows"]] == [1, 4, 64, 4096], [r["nodes"] for r in d["rows"]]
for r in d["rows"]:
    for k in ("first_order_pct", "daly_exact_pct", "monte_carlo_pct", "ettr", "first_order_valid"):
        assert k in r["current"], k
    for k in ("young_s", "daly_s", "exact_s", "monte_carlo_s", "monte_carlo_pct"):
        assert k in r["optimum"], k
p = d["run_prediction"]
assert p["nodes"] == 4 and p["mtbf_s"] == 30 and p["dead_time_s"] == 3, p
assert p["goodput_pct"]["low"] <= p["goodput_pct"]["median"] <= p["goodput_pct"]["high"]
assert p["goodput_inside"] in (True, False)
assert d["inputs"]["step_time_s"]["provenance"] == "measured"
assert d["inputs"]["node_mtbf_s"]["provenance"] == "assumed"
assert d["inputs"]["bootstrap"] is True
assert d["inputs"]["rejoin_s"]["provenance"] == "assumed"  # no failure of a restart soak rejoins
assert len(d["interval_curve"]["points"]) == 41
PY

# Without a results file: everything given or assumed, and the flags say "given".
expect 0 "$bin" model goodput --nodes 2048 --mtbf-node 264d --checkpoint-interval 1h --checkpoint-cost 30s \
  --detect 1min --restart 5min --restore 3min --trials 10
grep_out "--checkpoint-cost 30s"
grep_out "given"
if grep -qF "prediction interval" "$work/out"; then echo "FAIL: a prediction without a run"; exit 1; fi
expect 0 "$bin" model goodput --fleet-mtbf 3.1h --at-nodes 2048 --nodes 2048 --trials 10 --json
"$python" -c "import json,sys; d=json.load(open('$work/out')); assert abs(d['inputs']['node_mtbf_s']['value'] - 3.1*3600*2048) < 1, d['inputs']['node_mtbf_s']"

# Bad inputs: exit 2 and what is wrong.
expect 2 "$bin" model goodput --mtbf-node 0s --nodes 8
grep_err "MTBF must be above zero"
expect 2 "$bin" model goodput --checkpoint-cost -5s --nodes 8
grep_err "--checkpoint-cost"
expect 2 "$bin" model goodput --nodes 0
grep_err "outside 1..1,000,000"
expect 2 "$bin" model goodput --nodes 2000000
grep_err "outside 1..1,000,000"
expect 2 "$bin" model goodput --mode bogus --nodes 8
grep_err "expected checkpoint or memory"
expect 2 "$bin" model goodput --fleet-mtbf 3h --nodes 8
grep_err "--fleet-mtbf"
expect 2 "$bin" model goodput "$work/missing.json"
grep_err "missing.json"
expect 2 "$bin" model
expect 2 "$bin" model nonsense
grep_err "unknown model"
"$python" - "$fixture" "$work/serve.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["scenario"]["workload"] = {"kind": "serve"}
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 "$bin" model goodput "$work/serve.json" --nodes 8
grep_err "not train"
echo "model goodput CLI: all checks passed"
