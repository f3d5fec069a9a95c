#!/usr/bin/env bash
# The hybrid-parallel trainer's losses against two references (docs/hybrid-parallel.md),
# no faults, ranks on loopback started by tests/hybrid/run_ranks.py (no harness), the loss
# of each step from the ranks' `step` events. Model 32,64,64,64,8 (4 layers: 2 stages of
# one column/row pair each), global batch 64, seed 7, SGD lr 0.05 momentum 0.9.
#   hybrid_train_test.sh torch_reference /path/to/chaosbench   (hybrid.torch_reference)
#     `worker train-export` writes the initial weights and the batches of 20 steps;
#     tests/hybrid/torch_reference.py trains from them in PyTorch (Debian's python3-torch,
#     gloo), 2 stages x tp 2 with 4 microbatches; ours runs tp 2, pp 2, dp 1, 4
#     microbatches (GPipe). Relative difference of the losses <= 1e-5 at step 1, <= 1e-4
#     at step 20.
#   hybrid_train_test.sh same_loss /path/to/chaosbench         (hybrid.same_loss)
#     100 steps data-parallel on 4 ranks; tp 2, pp 2, dp 1 (GPipe) and tp 1, pp 2, dp 2
#     (1F1B), 4 microbatches each: the step-100 loss within 1e-4 relative of the
#     data-parallel run's.
# Both print the figures they judge, and every step's losses when one is over its limit.
# A hybrid run's ranks must also report their coordinates (tp_rank, pp_stage, dp_rank in
# their step events or train/loss samples) as Megatron's order gives them: a trainer that
# ignored --tp/--pp would otherwise pass as a data-parallel run.
set -euo pipefail

mode=${1:?usage: hybrid_train_test.sh torch_reference|same_loss /path/to/chaosbench}
bin=${2:?usage: hybrid_train_test.sh torch_reference|same_loss /path/to/chaosbench}
here=$(cd "$(dirname "$0")/.." && pwd)
hybrid=$here/hybrid

# Debian's python3 (python3-torch is for it); any python3 will do for same_loss.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
[ -n "$py" ] || { echo "skipped: no python3"; exit 0; }
[ -x "$bin" ] || { echo "no chaosbench binary at $bin" >&2; exit 2; }

model=(--layers "32,64,64,64,8" --batch-size 64 --seed 7 --lr 0.05 --momentum 0.9 --threads 1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The drivers' own temporary directories go in here too: gone even when one is SIGKILLed.
export TMPDIR=$work

# ours NAME STEPS TP PP DP [FLAGS...]: the losses of one run of ours into $work/NAME.json;
# with tp or pp above 1 each rank must report its coordinates in that layout.
ours() {
  local name=$1 steps=$2 tp=$3 pp=$4 dp=$5
  shift 5
  local expect=()
  [ $((tp * pp)) -gt 1 ] && expect=(--expect-layout "$tp,$pp,$dp")
  echo "== chaosbench, $name: tp $tp, pp $pp, dp $dp $*"
  "$py" "$hybrid/run_ranks.py" --binary "$bin" --world $((tp * pp * dp)) --timeout 120 "${expect[@]}" -- \
    "${model[@]}" --steps "$steps" --tp "$tp" --pp "$pp" --dp "$dp" "$@" > "$work/$name.json"
}

# judge REF NAME:STEP:TOL...: prints REF's and each run's loss per step asked for and the
# relative difference; fails when one is over its tolerance.
judge() {
  "$py" - "$work" "$@" <<'EOF'
import json, sys
work, ref, checks = sys.argv[1], sys.argv[2], sys.argv[3:]
load = lambda name: {int(k): v for k, v in json.load(open(f"{work}/{name}.json")).items()}
base, ok = load(ref), True
for check in checks:
    name, step, tol = check.split(":")
    got, step, tol = load(name), int(step), float(tol)
    rel = abs(got[step] - base[step]) / abs(base[step])
    worst = max(abs(got[s] - base[s]) / abs(base[s]) for s in base if s in got)
    verdict = "ok" if rel <= tol else "FAIL"
    ok &= rel <= tol
    print(f"{name} vs {ref}, step {step}: {got[step]!r} vs {base[step]!r}, relative difference {rel:.3e} "
          f"(limit {tol:g}) {verdict}; the largest over steps 1..{max(base)}: {worst:.3e}")
if not ok:
    names = list(dict.fromkeys(c.split(":")[0] for c in checks))
    runs = [load(n) for n in names]
    print(f"per step: {ref} {' '.join(names)}")
    for s in sorted(base):
        print(f"  {s:4d} {base[s]!r} " + " ".join(f"{r.get(s)!r}" for r in runs))
sys.exit(0 if ok else 1)
EOF
}

case $mode in
  torch_reference)
    "$py" -c "import torch.distributed as d, numpy; assert d.is_available() and d.is_gloo_available()" 2>/dev/null ||
      { echo "skipped: $py has no torch.distributed with gloo, or no numpy (Debian python3-torch: scripts/bootstrap.sh)"; exit 0; }
    steps=20
    "$bin" worker train-export "${model[@]:0:6}" --steps $steps --out "$work/data"
    echo "== PyTorch reference: tp 2, pp 2, 4 microbatches"
    "$py" "$hybrid/torch_reference.py" --data "$work/data" --tp 2 --pp 2 --microbatches 4 --lr 0.05 --momentum 0.9 \
      --steps $steps --timeout 120 > "$work/torch.json"
    ours tp2_pp2 $steps 2 2 1 --microbatches 4 --schedule gpipe
    judge torch tp2_pp2:1:1e-5 tp2_pp2:$steps:1e-4
    ;;
  same_loss)
    steps=100
    ours dp4 $steps 1 1 4
    ours tp2_pp2_dp1 $steps 2 2 1 --microbatches 4 --schedule gpipe
    ours tp1_pp2_dp2 $steps 1 2 2 --microbatches 4 --schedule 1f1b
    judge dp4 tp2_pp2_dp1:$steps:1e-4 tp1_pp2_dp2:$steps:1e-4
    ;;
  *) echo "usage: hybrid_train_test.sh torch_reference|same_loss /path/to/chaosbench" >&2; exit 2 ;;
esac
