#!/usr/bin/env bash
# Checks a "no behaviour change" refactoring: runs every scenario with an OLD and a NEW
# chaosbench binary, one after the other on this machine, and compares their results by
# RECORDS (verdict, exit code, metric/fault/process/check records, report files), not by
# values; values only get a noise table (scripts/same_records.py says what is compared).
#
#   scripts/same-records.sh [--keep] [--timeout S] OLD NEW [SCENARIO...]
#   scripts/same-records.sh [--timeout S] --only-old DIR OLD [SCENARIO...]   # keep OLD's runs in DIR/<name>/
#   scripts/same-records.sh [--keep] [--timeout S] --against DIR NEW [SCENARIO...]  # NEW vs kept runs
#
# Default scenarios: scenarios/*.json and scenarios/examples/*.json that are scenarios (not
# schema.json). Runs go to a temp dir under $SAME_RECORDS_DIR (else $TMPDIR or /tmp),
# removed on exit unless --keep (or SAME_RECORDS_KEEP=1). Exit 0 when every scenario has
# the same records, 1 when one differs, 2 on usage errors. Run it as root: namespaced
# clusters and network faults need it, and a run that cannot (exit 3) on both sides is SAME.
# SAME_RECORDS_TOP=N sets the rows of each noise table; SAME_RECORDS_STRICT_CHECKS=1 fails
# checks that flipped by their value (tolerated by default, see same_records.py).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)   # the repository; paths given are the caller's

usage() { sed -n '7,9p' "$0" | sed 's/^#  *//' >&2; exit 2; }
die() { echo "same-records: $*" >&2; exit 2; }

keep=${SAME_RECORDS_KEEP:-0}
timeout_s=900   # the longest scenario here takes about 2 minutes; a hung run must not block the rest
mode=compare kept=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --only-old) mode=only-old kept=$(readlink -m -- "${2:?}"); shift 2 ;;
    --against) mode=against kept=$(readlink -m -- "${2:?}"); shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done

binary() {  # an absolute path, so the runs may change directory without changing binaries
  [ -n "${1:-}" ] || usage
  local p; p=$(command -v -- "$1" 2>/dev/null) || die "$2 binary not found: $1"
  if [ ! -f "$p" ] || [ ! -x "$p" ]; then die "$2 binary is not an executable file: $1"; fi
  readlink -f -- "$p"
}
case $mode in
  compare) old=$(binary "${1:-}" OLD); new=$(binary "${2:-}" NEW); shift 2 ;;
  only-old) old=$(binary "${1:-}" OLD); shift ;;
  against) new=$(binary "${1:-}" NEW); shift; [ -d "$kept" ] || die "no kept runs in $kept" ;;
esac

# A scenario is a JSON object with a workload; schema.json and helper files are not.
# shellcheck disable=SC2016  # $schema is a JSON key, not a shell variable
is_scenario() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if isinstance(d,dict) and "workload" in d and "$schema" not in d else 1)' "$1" 2>/dev/null; }
scenarios=()
for f in "$@"; do [ -f "$f" ] || die "no such scenario: $f"; scenarios+=("$(readlink -f -- "$f")"); done
if [ ${#scenarios[@]} -eq 0 ]; then
  for f in "$here"/scenarios/*.json "$here"/scenarios/examples/*.json; do
    if [ -f "$f" ] && is_scenario "$f"; then scenarios+=("$f"); fi
  done
fi

work=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  if [ -n "$work" ] && [ -d "$work" ]; then
    if [ "$keep" = 1 ]; then echo "same-records: runs kept in $work" >&2; else rm -rf -- "$work"; fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM   # chaosbench itself gets the Ctrl-C too and reverts before it exits
if [ "$mode" != only-old ]; then
  parent=${SAME_RECORDS_DIR:-${TMPDIR:-/tmp}}
  mkdir -p -- "$parent"
  work=$(readlink -f -- "$(mktemp -d "$parent/same-records.XXXXXX")")
fi
cd "$here"   # as the demo runs: from the repository root

# One run into SIDE/: run/ (chaosbench --out), rc, seconds, console.log. Console output is
# kept, not shown, so the summary stays one line per scenario. SIGINT on timeout, so the
# harness reverts its faults; SIGKILL a minute later if it does not.
run_one() {
  local bin=$1 scenario=$2 side=$3 start rc
  rm -rf -- "$side"; mkdir -p -- "$side"
  start=$(date +%s.%N)
  set +e
  timeout -s INT -k 60 "$timeout_s" "$bin" run "$scenario" --out "$side/run" > "$side/console.log" 2>&1
  rc=$?
  set -e
  echo "$rc" > "$side/rc"
  python3 -c 'import sys,time; print(f"{time.time()-float(sys.argv[1]):.1f}")' "$start" > "$side/seconds"
}

status=0
for scenario in "${scenarios[@]}"; do
  name=$(basename "$scenario" .json)
  case $mode in
    only-old)
      run_one "$old" "$scenario" "$kept/$name"
      echo "$name: rc $(cat "$kept/$name/rc"), $(cat "$kept/$name/seconds") s -> $kept/$name"
      continue ;;
    compare) a="$work/old/$name"; run_one "$old" "$scenario" "$a" ;;
    against) a="$kept/$name"; [ -f "$a/rc" ] || { echo "$name: DIFFERENT no kept OLD run in $a"; status=1; continue; } ;;
  esac
  b="$work/new/$name"
  run_one "$new" "$scenario" "$b"
  python3 "$here/scripts/same_records.py" --name "$name" "$a" "$b" || status=1
done
exit $status
