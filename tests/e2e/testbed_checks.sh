# Sourced by the test bed tests (testbed_test.sh, testbed_slurm_test.sh, agents_test.sh):
# script_checks.sh's check and end_checks, and what only test beds need.
# shellcheck source=tests/e2e/script_checks.sh
. "$(dirname "${BASH_SOURCE[0]}")/script_checks.sh"

# The start every SSH test bed test shares: skips without root or sshd, sets $tb, makes
# $work (the test bed goes in $dir, inside it), and takes the test bed down and removes
# $work however the test ends: on exit (a failed check included) and on INT or TERM by the
# trap; and when the test is killed outright (a ctest timeout's SIGKILL) by a guardian
# that outlives it. Both also sweep the test bed's namespaces by their prefix (down --id),
# in case its directory went first. Needs $root (the source tree).
testbed_test_start() {
  tb="$root/scripts/testbed.sh"
  [ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces)"; exit 0; }
  [ -x /usr/sbin/sshd ] || { echo "skipped: no /usr/sbin/sshd (openssh-server; scripts/bootstrap.sh installs it)"; exit 0; }
  work=$(mktemp -d)
  dir="$work/bed"
  trap 'testbed_teardown' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # The guardian: in a session of its own (a signal to the test's group misses it), with
  # no descriptor of the test's (ctest waits for its output pipes to close).
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
    id=$(sed -n "s/^TB_ID=//p" "$3/state" 2>/dev/null)
    "$2" down "$3" >/dev/null 2>&1; [ -z "$id" ] || "$2" down --id "$id" >/dev/null 2>&1; rm -rf "$4"' \
    guardian "$$" "$tb" "$dir" "$work" </dev/null >/dev/null 2>&1 &
}

# The trap's work (see testbed_test_start); idempotent.
testbed_teardown() {
  local id
  id=$(sed -n 's/^TB_ID=//p' "$dir/state" 2>/dev/null)
  "$tb" down "$dir" >/dev/null 2>&1 || echo "testbed: down $dir failed; sweeping cbtb-$id-*" >&2
  [ -z "$id" ] || "$tb" down --id "$id" >/dev/null 2>&1 || echo "testbed: cbtb-$id-* could not be taken down" >&2
  rm -rf "$work"
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
