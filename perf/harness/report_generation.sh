#!/usr/bin/env bash
# Report generation at scale: a results.json whose series hold 10^6 samples (16 ranks x
# 4 per-step metrics x 15625 steps, with phases, faults, events and metric records),
# regenerated into every report by `chaosbench report` (results.json read and parsed,
# report.html, summary.md, junit.xml, trace.json written). Goals: under 2 s, and
# report.html under 5 MB (series are downsampled for display keeping extremes).
# Prints each run's wall time, the median, and the size of each file.
#   perf/harness/report_generation.sh [RUNS]   (default 5; needs a build: scripts/build.sh)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${1:-5}
python3 - "$tmp/results.json" <<'PY'
import json, math, random, sys
random.seed(1)
ranks, steps = 16, 15625
series, metrics = [], []
for name, unit, base in (("train/step_time", "ms", 60.0), ("train/compute_time", "ms", 40.0),
                         ("train/comm_time", "ms", 20.0), ("train/loss", "", 1.0)):
    for r in range(ranks):
        t = [round(0.5 + i * 0.064, 4) for i in range(steps)]
        if name == "train/loss":
            v = [round(base * math.exp(-i / 3000) + 0.01 * random.random(), 5) for i in range(steps)]
        else:
            v = [round(base * (1 + 0.1 * random.random()) * (3 if 300 < t[i] < 330 and r == 3 else 1), 3) for i in range(steps)]
        series.append({"name": name, "unit": unit, "labels": {"rank": r}, "t": t, "v": v})
    for phase in ("baseline", "fault:slow", "recovery:slow", "overall"):
        metrics.append({"name": name, "unit": unit, "better": "lower", "labels": {"phase": phase}, "value": base,
                        "stats": {"n": steps * ranks, "mean": base, "stddev": base * 0.05, "min": base * 0.9,
                                  "p50": base, "p90": base * 1.08, "p99": base * 1.1, "max": base * 3, "sum": base * steps}})
for r in range(ranks):
    metrics.append({"name": "train/straggler_score", "unit": "ratio", "better": "higher",
                    "labels": {"phase": "overall", "rank": r}, "value": 0.33 if r == 3 else 0.97})
end = 0.5 + steps * 0.064 + 1
events = [{"t": 0.4, "rank": r, "name": "train_start", "fields": {"step": 0, "world": ranks, "generation": 0,
           "attempt": 0, "reason": "fresh"}} for r in range(ranks)]
events += [{"t": 0.5 + s * 0.064, "rank": 0, "name": "checkpoint_saved",
            "fields": {"step": s, "kind": "full", "bytes": 16000000, "raw_bytes": 19000000, "blocking_ms": 20.0,
                       "write_ms": 120.0}} for s in range(500, steps, 500)]
doc = {"schema_version": 1, "tool": {"name": "chaosbench", "version": "0.1.0"},
       "scenario": {"schema_version": 1, "name": "big", "workload": {"kind": "train"}},
       "environment": {"host": "bench", "kernel": "Linux", "cpus": 2, "cluster": "synthetic", "backends": {}},
       "seed": 42, "run_id": "synthetic", "started_at": "2026-11-30T00:00:00Z", "duration_s": end,
       "verdict": "pass", "reason": "",
       "phases": [{"name": "baseline", "start_s": 0, "end_s": 300}, {"name": "fault:slow", "start_s": 300, "end_s": 330},
                  {"name": "recovery:slow", "start_s": 330, "end_s": end}],
       "faults": [{"name": "slow", "type": "node.cpu_throttle", "targets": ["node3"], "occurrence": 1,
                   "applied_at_s": 300, "reverted_at_s": 330, "backend": "cpu cgroup", "reversible": True}],
       "metrics": metrics, "series": series, "checks": [], "processes": [], "events": events,
       "protocol": {"samples": ranks * steps * 4, "events": len(events), "malformed": 0, "malformed_examples": []}}
json.dump(doc, open(sys.argv[1], "w"))
print(f"results.json: {sum(len(s['v']) for s in series)} samples in series", file=sys.stderr)
PY
times=()
for i in $(seq 1 "$runs"); do
  rm -rf "$tmp/out"
  start=$(date +%s.%N)
  "$cb" report "$tmp/results.json" --out "$tmp/out" --quiet >/dev/null
  end=$(date +%s.%N)
  t=$(python3 -c "print(f'{$end - $start:.3f}')")
  times+=("$t")
  echo "run $i: ${t} s"
done
python3 - "${times[*]}" <<'PY'
import statistics, sys
t = [float(x) for x in sys.argv[1].split()]
print(f"median {statistics.median(t):.3f} s (min {min(t):.3f}, max {max(t):.3f}); goal < 2 s")
PY
ls -l "$tmp/out" | awk 'NR > 1 { printf "%-14s %10.2f MB\n", $9, $5 / 1e6 }'
