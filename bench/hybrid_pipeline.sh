#!/usr/bin/env bash
# The pipeline bubble, measured against the analytic one, through `chaosbench run` (root):
# scenarios/hybrid-pipeline.json (equal stages, no faults) for p = 2, 4 stages, m = 4, 8
# microbatches, GPipe and 1F1B. Per run: train/pipeline_bubble p50 of each stage (overall),
# their mean, the analytic (p − 1)/(m + p − 1) and the difference in points; then the step
# time p50 against the slowest stage's compute p50 divided by (1 − analytic bubble), the
# step an ideal pipeline of those stages takes.
#   bench/hybrid_pipeline.sh [--set KEY=VALUE ...]
# On a machine with fewer cores than stages the stages share cores, which squeezes the
# pipeline's fill and drain (fewer stages compute then): say so next to the p = 4 figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin/chaosbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "cores: $(nproc)"
printf '%-6s %2s %2s %9s %9s %7s %10s %10s %6s\n' schedule p m bubble analytic diff step_ms ideal_ms ratio
for schedule in gpipe 1f1b; do
  for p in 2 4; do
    for m in 4 8; do
      dir="$out/$schedule-$p-$m"
      "$bin" run scenarios/hybrid-pipeline.json --out "$dir" --quiet --set cluster.nodes="$p" \
        --set workload.parallel.pp="$p" --set workload.parallel.microbatches="$m" \
        --set workload.parallel.schedule="$schedule" "$@" >/dev/null 2>&1 || true
      python3 - "$dir/results.json" "$schedule" "$p" "$m" <<'PY'
import json, statistics, sys
path, schedule, p, m = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
try:
    r = json.load(open(path))
except OSError:
    sys.exit(f"{schedule} p={p} m={m}: the run left no results.json")
def per_stage(name):
    out = {}
    for rec in r["metrics"]:
        l = rec["labels"]
        if rec["name"] == name and l.get("phase") == "overall" and "pp_stage" in l and "group" not in l:
            out.setdefault(int(l["pp_stage"]), []).append(rec["stats"]["p50"])
    return {s: statistics.mean(v) for s, v in sorted(out.items())}
bubble, stage, step = per_stage("train/pipeline_bubble"), per_stage("train/stage_time"), per_stage("train/step_time")
if len(bubble) != p:
    sys.exit(f"{schedule} p={p} m={m}: {len(bubble)} stages reported ({r.get('verdict')}: {r.get('reason', '')})")
analytic = 100.0 * (p - 1) / (m + p - 1)
measured = statistics.mean(bubble.values())
ideal = max(stage.values()) / (1 - analytic / 100)
step_ms = statistics.median(step.values())
print(f"{schedule:6} {p:2} {m:2} {measured:8.1f}% {analytic:8.1f}% {measured - analytic:+7.1f} {step_ms:10.1f} "
      f"{ideal:10.1f} {step_ms / ideal:6.2f}   per stage: " + " ".join(f"{v:.1f}" for v in bubble.values()))
PY
    done
  done
done
