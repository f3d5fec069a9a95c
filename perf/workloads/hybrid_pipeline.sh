#!/usr/bin/env bash
# The pipeline bubble, measured against the analytic one, through `chaosbench run` (root):
# scenarios/hybrid-pipeline.json (equal layers, no faults) for p = 2, 4 stages, m = 4, 8
# microbatches, GPipe and 1F1B. Per run: train/pipeline_bubble of the slowest stage (the
# one (p − 1)/(m + p − 1) describes; overall: the median of its ranks' steps), each
# stage's,
# their mean, the analytic (p − 1)/(m + p − 1) and the difference in points; then the step
# time p50 against the slowest stage's compute (its slowest rank's median) divided by
# (1 − analytic bubble), the step an ideal pipeline of those stages takes.
#   perf/workloads/hybrid_pipeline.sh [--set KEY=VALUE ...]
# On a machine with fewer cores than stages the stages share cores, which squeezes the
# pipeline's fill and drain (fewer stages compute then): say so next to the p = 4 figures.
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
echo "cores: $(nproc)"
printf '%-6s %2s %2s %9s %9s %7s %10s %10s %6s\n' schedule p m slowest analytic diff step_ms ideal_ms ratio
for schedule in gpipe 1f1b; do
  for p in 2 4; do
    for m in 4 8; do
      results=$(perf_run scenarios/hybrid-pipeline.json "$schedule-$p-$m" --set cluster.nodes="$p" \
        --set workload.parallel.pp="$p" --set workload.parallel.microbatches="$m" \
        --set workload.parallel.schedule="$schedule" "$@" 2>/dev/null)
      python3 - "$results" "$schedule" "$p" "$m" <<'PY'
import json, statistics, sys
path, schedule, p, m = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
try:
    r = json.load(open(path))
except OSError:
    sys.exit(f"{schedule} p={p} m={m}: the run left no results.json")
def per_stage(name):
    # The per-stage records the harness derives from the step events (label pp_stage).
    return {int(rec["labels"]["pp_stage"]): rec["value"] for rec in r["metrics"]
            if rec["name"] == name and rec["labels"].get("phase") == "overall"
            and "pp_stage" in rec["labels"] and "tp_group" not in rec["labels"]}
def pooled(name, stat):
    for rec in r["metrics"]:
        if rec["name"] == name and rec["labels"] == {"phase": "overall"}:
            return rec["stats"][stat]
    return float("nan")
bubble, stage = per_stage("train/pipeline_bubble"), per_stage("train/stage_time")
step_ms = pooled("train/step_time", "p50")
if len(bubble) != p:
    sys.exit(f"{schedule} p={p} m={m}: {len(bubble)} stages reported ({r.get('verdict')}: {r.get('reason', '')})")
analytic = 100.0 * (p - 1) / (m + p - 1)
# The formula is for equal stages; the slowest stage is the one it describes (a lighter
# stage, such as the first, which computes no input gradient, also waits for the slower).
slowest = max(stage, key=stage.get)
measured = bubble[slowest]
ideal = max(stage.values()) / (1 - analytic / 100)
print(f"{schedule:6} {p:2} {m:2} {measured:8.1f}% {analytic:8.1f}% {measured - analytic:+7.1f} {step_ms:10.1f} "
      f"{ideal:10.1f} {step_ms / ideal:6.2f}   per stage: " + " ".join(f"{v:.1f}" for v in bubble.values()))
PY
    done
  done
done
