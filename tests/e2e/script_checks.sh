# The checks of the script tests (tests/*_test.sh), sourced by them:
#   check "what" COMMAND...   runs COMMAND; prints "ok: what" or "FAILED: what", counting
#                             the failures in $failures
#   end_checks                exits 1, saying how many, when any check failed
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
end_checks() {
  [ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
}
