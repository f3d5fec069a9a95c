# Sourced by the test bed tests (testbed_test.sh, testbed_slurm_test.sh).
failures=0
check() {  # check "what" command...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}

# The pids among $@ that are alive. A zombie is gone too: the daemons' parent is pid 1,
# which may not reap here.
alive() {
  local pid state
  for pid in "$@"; do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
    [ -n "$state" ] && [ "$state" != Z ] && echo "$pid"
  done
  return 0
}
