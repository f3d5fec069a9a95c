#!/usr/bin/env bash
# The run-level gate's acceptance on this machine (docs/gate.md, "Repeated runs"):
#   A/A: ROUNDS sets of `chaosbench run SCENARIO --repeat REPEAT`, then
#     `chaosbench compare SET_i SET_i+1 --gate` on each consecutive pair (ROUNDS - 1
#     comparisons); goal: at least 19 of 20 pass (exit 0).
#   Power (the trainer only): in each round, after the A set, one set per LEVEL of a slowed
#     build of the same scenario — every hidden layer widened so that a sample costs LEVEL %
#     more FLOPs — compared with that round's A set; goal: a 10 % regression fails >= 19 of
#     20 times, a 30 % one 20 of 20. The achieved slowdown (median over rounds of the
#     change of train/throughput) is printed next to each level, and the smallest level
#     detected in >= 95 % of the rounds is named.
#   perf/harness/gate_repeat.sh [SCENARIO] [ROUNDS] [REPEAT] [LEVELS]
#     SCENARIO  perf/scenarios/gate-power-train.json (default: 2 compute-bound ranks, where
#               FLOPs turn into time), gate-aa-train.json or gate-aa-collective.json
#     ROUNDS 21, REPEAT 5, LEVELS "10 20 30" (percent more FLOPs; "" for A/A only;
#     ignored for a scenario that is not a train workload)
#   Needs a build (build/bin/chaosbench) and root (namespaces). About 25 min with the
#   defaults; A/A alone on gate-aa-train about 5, on gate-aa-collective about 4.
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
scenario=${1:-perf/scenarios/gate-power-train.json}
rounds=${2:-21}
repeat=${3:-5}
levels=${4-10 20 30}
# A copy: a rebuild during the ~20 minutes must not swap the binary under a run.
cp "$cb" "$tmp/chaosbench"
cb=$tmp/chaosbench
grep -q '"kind": "train"' "$scenario" || levels=""

# The slowed builds: hidden widths scaled until the FLOPs per sample (sum of in x out over
# the layers) grow by LEVEL %.
for level in $levels; do
  python3 - "$scenario" "$level" "$tmp/slow-$level.json" <<'PY'
import json, sys
src, level, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
s = json.load(open(src))
layers = s["workload"]["model"]["layers"]
flops = lambda ls: sum(a * b for a, b in zip(ls, ls[1:]))
target = flops(layers) * (1 + level / 100)
lo, hi = 1.0, 2.0
for _ in range(60):
    mid = (lo + hi) / 2
    wide = [layers[0]] + [round(w * mid) for w in layers[1:-1]] + [layers[-1]]
    lo, hi = (mid, hi) if flops(wide) < target else (lo, mid)
wide = [layers[0]] + [round(w * hi) for w in layers[1:-1]] + [layers[-1]]
s["name"] += f"-slow{level:g}"
s["workload"]["model"]["layers"] = wide
json.dump(s, open(out, "w"))
print(f"slowed build +{level:g}% FLOPs: layers {layers} -> {wide} ({flops(wide) / flops(layers) - 1:+.1%})")
PY
done

start=$(date +%s)
for i in $(seq 1 "$rounds"); do
  perf_run "$scenario" "a$i" --repeat "$repeat" >/dev/null 2>&1
  [[ -f $tmp/a$i/results.json ]] || { echo "round $i: the A set produced no results.json" >&2; exit 2; }
  [[ $i -eq $rounds ]] && break
  for level in $levels; do
    perf_run "$tmp/slow-$level.json" "s$level-$i" --repeat "$repeat" >/dev/null 2>&1
  done
done
echo "$rounds rounds of $scenario (--repeat $repeat; slowed builds: ${levels:-none}) in $(( $(date +%s) - start )) s"

passed=0; warned=0
for i in $(seq 2 "$rounds"); do
  if out=$("$cb" compare "$tmp/a$((i - 1))/results.json" "$tmp/a$i/results.json" --gate); then
    passed=$((passed + 1))
    grep -q '^verdict: WARN' <<<"$out" && warned=$((warned + 1))
  else
    echo "--- A/A comparison $((i - 1)) -> $i failed:"
    grep -E '^(FAIL|verdict)' -A1 <<<"$out" | grep -v '^--$' || true
  fi
done
echo "A/A: $passed of $((rounds - 1)) comparisons passed the gate ($warned with WARN rows); goal >= 19 of 20"

smallest=""
for level in $levels; do
  failed=0; changes=()
  for i in $(seq 1 $((rounds - 1))); do
    rc=0; json=$("$cb" compare "$tmp/a$i/results.json" "$tmp/s$level-$i/results.json" --json) || true
    "$cb" compare "$tmp/a$i/results.json" "$tmp/s$level-$i/results.json" --gate >/dev/null || rc=$?
    [[ $rc -eq 1 ]] && failed=$((failed + 1))
    changes+=("$(python3 -c 'import json,sys
rows={(m["name"],m["stat"]):m["change"] for m in json.load(sys.stdin)["metrics"] if m["labels"].get("phase")=="overall"}
print(rows.get(("train/throughput","value"),"nan"), rows.get(("train/step_time","p50"),"nan"))' <<<"$json")")
  done
  achieved=$(printf '%s\n' "${changes[@]}" | python3 -c 'import sys,statistics
rows=[l.split() for l in sys.stdin if l.strip()]
med=lambda i: statistics.median(float(r[i]) for r in rows if r[i]!="nan")
print(f"throughput {med(0):+.1%}, step time p50 {med(1):+.1%}")')
  echo "slowed build +$level% FLOPs ($achieved, medians over rounds): the gate failed $failed of $((rounds - 1))"
  [[ -z $smallest && $failed -ge $(( (rounds - 1) * 19 / 20 )) ]] && smallest="+$level% FLOPs ($achieved)"
done
[[ -n $levels ]] && echo "smallest regression detected in >= 95% of the rounds: ${smallest:-none of the levels tried}"
exit 0
