#!/usr/bin/env bash
# `chaosbench history add|gate|show` from the command line: exit codes (0 pass or warn, 1
# fail, 2 usage, unreadable or other hardware), the refusal of a history from another
# testbed or hardware naming what differs, refused duplicates, a bad history line named
# by file:line, names that would leave the store, and the --summary table.
#   tests/history/cli_test.sh CHAOSBENCH
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
store=$work/store

# results RUN_ID STEP_MS [TESTBED [CPUS [SCENARIO [VERDICT]]]] > file
results() {
  local id=$1 ms=$2 testbed=${3:-ci-small} cpus=${4:-2} scenario=${5:-demo} verdict=${6:-pass}
  cat <<JSON
{"schema_version": 1, "scenario": {"name": "$scenario"}, "run_id": "$id", "started_at": "2024-05-01T10:00:00Z",
 "verdict": "$verdict",
 "environment": {"testbed": "$testbed", "cpu_model": "Xeon", "cpus": $cpus, "cpu_flags": ["avx2"], "git_commit": "c-$id"},
 "metrics": [{"name": "train/step_time", "unit": "ms", "better": "lower", "labels": {"phase": "overall"}, "value": $ms,
              "stats": {"n": 100, "mean": $ms, "stddev": 1, "min": $ms, "p50": $ms, "p90": $ms, "p99": $ms, "max": $ms, "sum": 1}}]}
JSON
}

# shellcheck source=tests/e2e/cli_expect.sh
. "$(dirname "${BASH_SOURCE[0]}")/../e2e/cli_expect.sh"

i=0
for ms in 100 101 99 102 98 100 101 99; do
  results "run-$i" "$ms" >"$work/r$i.json"
  i=$((i + 1))
done
expect 0 "$bin" history add "$store" "$work"/r[0-7].json
grep_out "added run run-7"
[ "$(wc -l <"$store/ci-small/demo/history.jsonl")" = 8 ] || { echo "FAIL: 8 lines expected"; exit 1; }
expect 2 "$bin" history add "$store" "$work/r3.json"
grep_err "run run-3 is already in"
# A run that did not finish is no point of a history; nothing of the add is written.
results cut 100 ci-small 2 demo aborted >"$work/aborted.json"
results next 100 >"$work/next.json"
expect 2 "$bin" history add "$store" "$work/next.json" "$work/aborted.json"
grep_err "the run's verdict is aborted"
[ "$(wc -l <"$store/ci-small/demo/history.jsonl")" = 8 ] || { echo "FAIL: a refused add wrote"; exit 1; }

results current 100.5 >"$work/same.json"
expect 0 "$bin" history gate "$store" "$work/same.json"
grep_out "verdict: PASS"
results slow 130 >"$work/slow.json"
expect 1 "$bin" history gate "$store" "$work/slow.json" --summary "$work/summary.md"
grep_out "regression: +"
grep -qF "| FAIL | train/step_time {phase=overall} | p50 |" "$work/summary.md" || { echo "FAIL: summary"; cat "$work/summary.md"; exit 1; }
expect 0 "$bin" history gate "$store" "$work/slow.json" --tolerance 40
expect 0 "$bin" history gate "$store" "$work/slow.json" --min-history 9
grep_out "too few history runs: 8, need 9"

# Other hardware under the same label: refused, naming the difference.
results bigger 100 ci-small 16 >"$work/bigger.json"
expect 2 "$bin" history gate "$store" "$work/bigger.json"
grep_err "its newest run (run-7): measured on another testbed or hardware"
grep_err "CPUs: 2 (baseline) vs 16 (current)"
grep_err "(--allow-env-diff compares them anyway)"
expect 0 "$bin" history gate "$store" "$work/bigger.json" --allow-env-diff
grep_err "warning: the history's newest run (run-7) was measured on another testbed or hardware"
expect 2 "$bin" history add "$store" "$work/bigger.json"
grep_err "CPUs: 2 (baseline) vs 16 (current)"

# Another testbed label: its own history (none yet: WARN, naming the one there is);
# against ci-small's history on purpose: refused, naming the labels.
results laptop-1 100 laptop >"$work/laptop.json"
expect 0 "$bin" history gate "$store" "$work/laptop.json"
grep_err "no history of demo on testbed laptop yet"
grep_err "testbeds with one: ci-small"
grep_out "verdict: WARN"
expect 2 "$bin" history gate "$store" "$work/laptop.json" --testbed ci-small
grep_err "testbed: ci-small (baseline) vs laptop (current)"

# Names that would leave the store stay inside it, encoded.
results evil 100 "../.." 2 "../../escape" >"$work/evil.json"
expect 0 "$bin" history add "$store" "$work/evil.json"
[ -f "$store/%2E.%2F../%2E.%2F..%2Fescape/history.jsonl" ] || { echo "FAIL: encoded path"; find "$store"; exit 1; }
[ ! -e "$work/escape" ] || { echo "FAIL: a name left the store"; exit 1; }
expect 0 "$bin" history show "$store" --testbed ../.. --json
grep_out '"scenario": "../../escape"'

# A bad line is named by file and line; unreadable input is exit 2.
echo '{"schema_version": 1, "run_id": ' >>"$store/ci-small/demo/history.jsonl"
echo '{}' >>"$store/ci-small/demo/history.jsonl"
expect 2 "$bin" history gate "$store" "$work/same.json"
grep_err "ci-small/demo/history.jsonl:9: "
expect 2 "$bin" history gate "$store" "$work/missing.json"
grep_err "missing.json"
expect 2 "$bin" history show "$store"
expect 2 "$bin" history gate "$store"
expect 2 "$bin" history
expect 2 "$bin" history frobnicate
expect 0 "$bin" history --help
grep_out "history gate DIR RESULTS.json"
expect 0 "$bin" history gate --help
echo "history CLI: exit codes, refusals and the summary as documented"
