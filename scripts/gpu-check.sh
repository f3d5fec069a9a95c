#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU and no network: builds chaosbench with
# its CUDA parts (Release, Ninja, every core), lists the GPUs, checks that the CUDA
# layer's module loads (doctor's cuda_parts), runs the GPU tests ("[cuda]",
# "[cuda-interposer]") and, when it exists, the scenarios/gpu-train.json run.
# Installs nothing: the build dependencies (scripts/bootstrap.sh's packages) and the CUDA
# toolkit with cuBLAS and NCCL must be there. Each step has a time limit so the whole
# check stays under 8 minutes. Logs, test output and the scenario's run directory go to
# $OUT/gpu-check/ when OUT is set, else build/gpu-check/. Ends with a summary; the
# exit status is non-zero when any step failed (a GPU test that skipped counts as failed:
# this machine is meant to have a GPU).
# Environment: OUT, CHAOSBENCH_GPU_BUILD (build directory, default build),
# CHAOSBENCH_WERROR (default OFF), CUDAARCHS (GPU architectures; default 90, H100/H200).
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$(date +%s)
build="${CHAOSBENCH_GPU_BUILD:-build}"
if [ -n "${OUT:-}" ]; then dest="$OUT/gpu-check"; else dest="$build/gpu-check"; fi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
export PATH="$PATH:/usr/local/cuda/bin"
# NCCL says why when a communicator fails (set NCCL_DEBUG=INFO for its topology).
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"

summary=()
failed=0
# step NAME LIMIT_S COMMAND...: runs the command under `timeout`, output to $dest/NAME.log
# (and to the terminal), and records its outcome for the summary.
step() {
  local name=$1 limit=$2
  shift 2
  local s rc=0
  s=$(date +%s)
  echo "== $name (limit ${limit}s): $*"
  timeout --kill-after=10 "$limit" "$@" > >(tee "$dest/$name.log") 2>&1 || rc=$?
  local took=$(( $(date +%s) - s ))
  if [ $rc -eq 0 ]; then
    summary+=("ok      $name (${took}s)")
  else
    [ $rc -eq 124 ] && rc="124, timed out"
    summary+=("FAILED  $name (exit $rc, ${took}s; log: $dest/$name.log)")
    failed=1
  fi
  return 0
}

print_summary() {
  echo
  echo "== gpu-check summary ($(( $(date +%s) - t0 ))s; logs in $dest)"
  printf '  %s\n' "${summary[@]}"
  [ $failed -eq 0 ] && echo "gpu-check: PASSED" || echo "gpu-check: FAILED"
}
trap print_summary EXIT

missing=()
for tool in cmake ninja nvcc nvidia-smi; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  summary+=("FAILED  tools: not found: ${missing[*]} (this script installs nothing)")
  failed=1
  exit 1
fi

step gpus 30 nvidia-smi -L
step configure 90 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHAOSBENCH_CUDA=ON \
  -DCHAOSBENCH_WERROR="${CHAOSBENCH_WERROR:-OFF}"
[ $failed -eq 0 ] && step build 240 cmake --build "$build" -j "$(nproc)"
if [ $failed -ne 0 ]; then exit 1; fi

# The trainer's CUDA layer is a module the binary opens at run time: doctor says whether
# it loads here (with the CUDA runtime and NCCL) before the tests need it.
step cuda-layer 30 bash -c '"$1" doctor | grep -E "^ +ok +cuda_parts "' _ "$build/bin/chaosbench"
step gpu-tests 120 "$build/bin/chaosbench_bench_tests" "[cuda],[cuda-layer]" --durations yes
step interposer-tests 120 "$build/bin/chaosbench_faults_tests" "[cuda-interposer]" --durations yes
if grep -q "skipped: no CUDA device" "$dest/gpu-tests.log"; then
  summary+=("FAILED  gpu-tests skipped: $(grep -m1 -o 'no CUDA device.*' "$dest/gpu-tests.log")")
  failed=1
fi

if [ -f scenarios/gpu-train.json ]; then
  rm -rf "$dest/gpu-train"
  step gpu-train 150 "$build/bin/chaosbench" run scenarios/gpu-train.json --out "$dest/gpu-train"
else
  summary+=("skipped gpu-train (no scenarios/gpu-train.json)")
fi

[ $failed -eq 0 ]
