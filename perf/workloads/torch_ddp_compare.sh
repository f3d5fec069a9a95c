#!/usr/bin/env bash
# chaosbench's trainer against PyTorch DDP (Debian's python3-torch, gloo), side by side:
# RUNS rounds (default 5), each running, one after the other, on the same 2-node cluster
# with 2 ranks of 1 BLAS thread, the same BLAS kernel (the harness gives both the same
# OPENBLAS_CORETYPE) and SGD with momentum:
#   chaosbench   the built-in trainer, default gradient allreduce (tcp_ring)
#   gloo-bcube   the built-in trainer on gloo's bcube allreduce (the transport's share)
#   torch        scenarios/examples/torch_ddp.py, plain DDP
# on two configurations:
#   small        MLP 256-1024-1024-10, 64 samples per rank, 1000 steps
#   demo         the demo model 256-1024-1024-1024-16, global batch 1024, 60 steps
# Throughput is the steady state, global batch / median step time (start-up and
# Python's imports left out, the same way for all three). Prints per configuration the
# median samples/s of each, the ratio of medians (goal >= 1.5x PyTorch DDP on the small
# configuration), the per-phase breakdown of a step (medians of the per-step samples),
# CPU time per rank-step (every thread, kernel included), and the two bounds:
#   compute at the GEMM peak + exposed communication  (flops / compute/gemm_tflops + comm);
#   the CPU bound: ranks x CPU time per rank-step / cores (what 2 shared cores can do).
#   perf/workloads/torch_ddp_compare.sh [RUNS]   (needs a build and python3-torch; root for namespaces)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${1:-5}
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null || { echo "python3-torch is missing (scripts/bootstrap.sh)" >&2; exit 3; }

ours=perf/scenarios/ddp-compare-chaosbench.json
theirs=perf/scenarios/ddp-compare-torch.json
demo_ours=(--set 'workload.model.layers=[256,1024,1024,1024,16]' --set workload.batch_size=1024 --set workload.steps=60)
demo_theirs=(--set workload.argv.3=256,1024,1024,1024,16 --set 'workload.argv.5="512"' --set 'workload.argv.7="60"')
run() { perf_run "$2" "$1" "${@:3}" >/dev/null; }  # out-name scenario [--set ...]
start=$(date +%s)
for i in $(seq 1 "$runs"); do
  run "small-chaosbench-$i" "$ours"
  run "small-gloo-bcube-$i" "$ours" --set workload.algorithm=bcube
  run "small-torch-$i" "$theirs"
  run "demo-chaosbench-$i" "$ours" "${demo_ours[@]}"
  run "demo-gloo-bcube-$i" "$ours" "${demo_ours[@]}" --set workload.algorithm=bcube
  run "demo-torch-$i" "$theirs" "${demo_theirs[@]}"
  echo "round $i of $runs done ($(( $(date +%s) - start )) s)" >&2
done

python3 - "$tmp" "$runs" <<'PY'
import glob, json, os, statistics, sys
sys.path.insert(0, "perf")
from results_summary import metric, report_failures
tmp, runs = sys.argv[1], int(sys.argv[2])
# global batch and layer widths of each configuration
configs = {"small": (128, [256, 1024, 1024, 10]), "demo": (1024, [256, 1024, 1024, 1024, 16])}
def flops_per_rank_step(batch, widths):  # bench/compute/mlp_model.h: model FLOPs, 2 ranks
    per_sample = sum((2 if l == 0 else 3) * 2 * widths[l] * widths[l + 1] for l in range(len(widths) - 1))
    return per_sample * batch / 2
cores = os.cpu_count()
for config, (batch, widths) in configs.items():
    print(f"\n{config}: global batch {batch}, 2 ranks x 1 BLAS thread on {cores} cores; medians of {runs} rounds")
    rates, rows = {}, {}
    for who in ("chaosbench", "gloo-bcube", "torch"):
        rs = []
        for i in range(1, runs + 1):
            try:
                rs.append(json.load(open(f"{tmp}/{config}-{who}-{i}/results.json")))
            except OSError:
                pass
        report_failures(rs)
        def p50(name):
            v = [metric(r, name)["stats"]["p50"] for r in rs if metric(r, name) and metric(r, name).get("stats")]
            return statistics.median(v) if v else None
        step = p50("train/step_time")
        if step is None:
            print(f"  {who}: no step times")
            continue
        rates[who] = [batch / metric(r, "train/step_time")["stats"]["p50"] * 1e3 for r in rs if metric(r, "train/step_time")]
        parts = {n: p50(f"train/{n}_time") for n in ("data", "forward", "backward", "comm", "optimizer", "cpu")}
        rows[who] = (step, parts)
        lo, hi = min(rates[who]), max(rates[who])
        print(f"  {who:<11} {statistics.median(rates[who]):>8.0f} samples/s (min {lo:.0f}, max {hi:.0f})  step p50 {step:.2f} ms")
        shown = "  ".join(f"{n} {v:.2f}" for n, v in parts.items() if v is not None)
        print(f"  {'':<11} per rank-step, ms: {shown}")
        if who != "torch":
            gemm = [metric(r, "compute/gemm_tflops")["value"] for r in rs if metric(r, "compute/gemm_tflops")]
            flops = flops_per_rank_step(batch, widths)
            if gemm and parts["comm"] is not None:
                at_peak = flops / (statistics.median(gemm) * 1e12) * 1e3
                bound = at_peak + parts["comm"]
                print(f"  {'':<11} compute at the GEMM peak ({statistics.median(gemm) * 1e3:.0f} GFLOP/s) {at_peak:.2f} ms"
                      f" + exposed comm {parts['comm']:.2f} = {bound:.2f} ms; step / that = {step / bound:.2f} (goal <= 1.5)")
            if parts["cpu"]:
                cpu_bound = 2 * parts["cpu"] / cores
                print(f"  {'':<11} CPU bound: 2 ranks x {parts['cpu']:.2f} ms CPU / {cores} cores = {cpu_bound:.2f} ms;"
                      f" step / that = {step / cpu_bound:.2f}")
    for who in ("chaosbench", "gloo-bcube"):
        if who in rates and "torch" in rates:
            ratio = statistics.median(rates[who]) / statistics.median(rates["torch"])
            goal = " (goal >= 1.5)" if config == "small" and who == "chaosbench" else ""
            print(f"  ratio of medians {who} / torch: {ratio:.2f}x{goal}")
PY
