# Exit-code and output checks of the command-line tests (tests/*/cli_test.sh), sourced by
# them after they set $work (a scratch directory):
#   expect CODE COMMAND...   runs COMMAND, its output in $work/out and $work/err; fails the
#                            test unless it exits CODE
#   grep_out TEXT, grep_err TEXT   fail the test unless stdout (stderr) holds TEXT
expect() {
  local want=$1 got=0
  shift
  "$@" >"$work/out" 2>"$work/err" || got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $* exited $got, expected $want"; cat "$work/out" "$work/err"; exit 1
  fi
}
grep_err() { grep -qF -- "$1" "$work/err" || { echo "FAIL: stderr lacks \"$1\":"; cat "$work/err"; exit 1; }; }
grep_out() { grep -qF -- "$1" "$work/out" || { echo "FAIL: stdout lacks \"$1\":"; cat "$work/out"; exit 1; }; }
