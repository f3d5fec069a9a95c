#!/usr/bin/env bash
# The trainer's speed goals, each over several runs (medians, with min and max):
#   single-rank train/mfu of the default model (goal >= 50%), against compute/gemm_tflops
#     measured by the same rank with the same thread count;
#   train/overlap on 4 ranks (goal >= 50%), with the step time split;
#   resilience/time_to_recover for node.kill at step 150 in elastic mode (goal <= 2 s) and
#     restart mode (goal <= 5 s + checkpoint load + the 3 s the node is down), on the
#     acceptance scenarios; with lost steps and the delta/full checkpoint sizes.
#   perf/workloads/train.sh [RUNS]   (default 3; needs a build: scripts/build.sh; root for 4 ranks in namespaces)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${1:-3}
run() { perf_run "$1" "$2"; }  # scenario name -> results.json path
files_single=(); files_overlap=(); files_elastic=(); files_restart=()
for i in $(seq 1 "$runs"); do
  files_single+=("$(run perf/scenarios/train-single.json single$i)")
  files_overlap+=("$(run perf/scenarios/train-overlap.json overlap$i)")
  files_elastic+=("$(run scenarios/train-node-kill-elastic.json elastic$i)")
  files_restart+=("$(run scenarios/train-node-kill.json restart$i)")
  echo "run $i done" >&2
done
python3 - "${files_single[*]}" "${files_overlap[*]}" "${files_elastic[*]}" "${files_restart[*]}" <<'PY'
import sys
sys.path.insert(0, "perf")
from results_summary import load, metric, summary, report_failures
single, overlap, elastic, restart = (load(a) for a in sys.argv[1:5])
summary("single-rank train/mfu", [metric(r, "train/mfu")["value"] for r in single if metric(r, "train/mfu")], "%", ">= 50%")
summary("  compute/gemm_tflops", [metric(r, "compute/gemm_tflops")["value"] * 1e3 for r in single
                                   if metric(r, "compute/gemm_tflops")], " GFLOP/s", "-")
summary("  train/step_time", [metric(r, "train/step_time")["stats"]["p50"] for r in single if metric(r, "train/step_time")], " ms", "-")
summary("4-rank train/overlap", [metric(r, "train/overlap")["value"] for r in overlap if metric(r, "train/overlap")], "%", ">= 50%")
for name in ("train/step_time", "train/compute_time", "train/comm_time"):
    summary(f"  {name} p50", [metric(r, name)["stats"]["p50"] for r in overlap if metric(r, name)], " ms", "-")
for title, rs, goal in (("elastic", elastic, "<= 2 s"), ("restart", restart, "<= 5 s + checkpoint load + 3 s node down")):
    summary(f"{title} resilience/time_to_recover", [metric(r, "resilience/time_to_recover")["value"] for r in rs
                                                    if metric(r, "resilience/time_to_recover")], " s", goal)
    summary(f"  {title} resilience/time_to_detect", [metric(r, "resilience/time_to_detect")["value"] for r in rs
                                                     if metric(r, "resilience/time_to_detect")], " s", "-")
    summary(f"  {title} resilience/lost_steps", [metric(r, "resilience/lost_steps")["value"] for r in rs
                                                 if metric(r, "resilience/lost_steps")], "", "restart <= 50, elastic <= 1")
    summary(f"  {title} train/loss_ratio", [metric(r, "train/loss_ratio")["value"] for r in rs
                                            if metric(r, "train/loss_ratio")], "", "< 0.5")
    summary(f"  {title} resilience/goodput", [metric(r, "resilience/goodput")["value"] for r in rs
                                              if metric(r, "resilience/goodput")], "%", "-")
summary("ckpt/size full", [metric(r, "ckpt/size", kind="full")["value"] for r in restart if metric(r, "ckpt/size", kind="full")], " B", "-")
summary("ckpt/size delta", [metric(r, "ckpt/size", kind="delta")["value"] for r in restart if metric(r, "ckpt/size", kind="delta")], " B", "-")
summary("ckpt/restore_time", [metric(r, "ckpt/restore_time")["value"] for r in restart if metric(r, "ckpt/restore_time")], " ms", "-")
summary("ckpt/save_time", [metric(r, "ckpt/save_time")["value"] for r in restart if metric(r, "ckpt/save_time")], " ms", "-")
report_failures(restart + elastic)
PY
