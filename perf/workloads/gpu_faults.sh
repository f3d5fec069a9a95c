#!/usr/bin/env bash
# GPU faults on the built-in trainer (Path 1, on this CPU machine), each acceptance
# scenario over several runs (medians, with min and max):
#   gpu.xid on rank 2, restart and elastic recovery: time to detect and recover;
#   gpu.slowdown x3 on rank 1: its straggler score in the window (goal < 0.75) and the
#     job's throughput retention;
#   gpu.hang on rank 2: detected by the collective timeout, recovered;
#   gpu.bitflip in rank 2's gradients and parameters: steps to detection (goal <= 1) and
#     the share caught.
#   perf/workloads/gpu_faults.sh [RUNS]   (default 3; needs a build: scripts/build.sh; root for 4 ranks in namespaces)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${1:-3}
declare -A files
names=(gpu-xid-restart gpu-xid-elastic gpu-slowdown gpu-hang gpu-bitflip)
for i in $(seq 1 "$runs"); do
  for n in "${names[@]}"; do
    files[$n]+="$(perf_run "scenarios/$n.json" "$n$i") "
  done
  echo "run $i done" >&2
done
python3 - "${files[gpu-xid-restart]}" "${files[gpu-xid-elastic]}" "${files[gpu-slowdown]}" "${files[gpu-hang]}" \
  "${files[gpu-bitflip]}" <<'PY'
import sys
sys.path.insert(0, "perf")
from results_summary import load, values, summary, report_failures

restart, elastic, slow, hang, flip = (load(a) for a in sys.argv[1:6])
for title, rs, goal in (("gpu.xid restart", restart, "detect <= 1 s, recover <= 30 s (2 s reset)"),
                        ("gpu.xid elastic", elastic, "detect <= 1 s, recover <= 5 s"),
                        ("gpu.hang elastic", hang, "detect ~ the 2 s collective timeout, recover <= 10 s")):
    summary(f"{title} resilience/time_to_detect", values(rs, "resilience/time_to_detect"), " s", goal)
    summary(f"  {title} resilience/time_to_recover", values(rs, "resilience/time_to_recover"), " s", "-")
    summary(f"  {title} resilience/lost_steps", values(rs, "resilience/lost_steps"), "", "-")
summary("gpu.slowdown x3 train/straggler_score of rank 1 in the window",
        values(slow, "train/straggler_score", phase="fault:throttled", rank=1), "", "< 0.75")
summary("  other ranks' train/straggler_score in the window",
        [v for r in (0, 2, 3) for v in values(slow, "train/straggler_score", phase="fault:throttled", rank=r)], "", "-")
summary("  resilience/throughput_retention in the window",
        values(slow, "resilience/throughput_retention", phase="fault:throttled"), "", "< 1")
summary("gpu.bitflip resilience/sdc_detection_steps",
        [v for r in flip for v in [m["value"] for m in r["metrics"] if m["name"] == "resilience/sdc_detection_steps"]],
        " steps", "<= 1")
summary("  resilience/sdc_caught", values(flip, "resilience/sdc_caught"), "", "1")
summary("  resilience/time_to_detect", values(flip, "resilience/time_to_detect"), " s", "-")
report_failures(restart + elastic + slow + hang + flip)
PY
