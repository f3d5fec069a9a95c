# Sourced by the test bed tests (testbed_test.sh, testbed_slurm_test.sh, agents_ssh_test.sh):
# script_checks.sh's check and end_checks, and what only test beds need.
# shellcheck source=tests/script_checks.sh
. "$(dirname "${BASH_SOURCE[0]}")/script_checks.sh"

# The start every SSH test bed test shares: skips without root or sshd, sets $tb, makes
# $work (the test bed goes in $dir, inside it), and takes the test bed down and removes
# $work on every exit. Needs $root (the source tree).
testbed_test_start() {
  tb="$root/scripts/testbed.sh"
  [ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces)"; exit 0; }
  [ -x /usr/sbin/sshd ] || { echo "skipped: no /usr/sbin/sshd (openssh-server; scripts/bootstrap.sh installs it)"; exit 0; }
  work=$(mktemp -d)
  dir="$work/bed"
  trap '"$tb" down "$dir" >/dev/null 2>&1; rm -rf "$work"' EXIT
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
