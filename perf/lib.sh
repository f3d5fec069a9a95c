# perf/lib.sh: the prelude every perf/workloads/*.sh and perf/harness/*.sh sources first:
#   . "$(dirname "$0")/../lib.sh"
# It gives the script:
#   strict mode (set -euo pipefail), and the repository root as working directory;
#   $perf_root     the repository root (absolute);
#   $perf_script   the script itself (absolute), e.g. for a usage text read from its header;
#   $cb            the chaosbench under test, absolute: $CHAOSBENCH when set (a relative path
#                  is the caller's, taken before the cd), else build/bin/chaosbench; exit 3
#                  with a message when it is not an executable file. Timing an old and a new
#                  binary side by side is two commands:
#                    CHAOSBENCH=/old/build/bin/chaosbench perf/workloads/train.sh; perf/workloads/train.sh
#   $perf_bin_dir  the directory of $cb, where its sibling programs are (trivial_http_server,
#                  gloo_bare_allreduce, record_flood, int8_bench);
#   $tmp           a fresh directory, removed on exit (kept when the script sets perf_keep_tmp=1);
#   perf_on_exit 'COMMAND'   adds COMMAND to the one EXIT trap (run in order, before $tmp is
#                  removed, failures ignored); a script never sets an EXIT trap itself;
#   perf_run SCENARIO NAME [run args...]   `$cb run SCENARIO --out $tmp/NAME --quiet ARGS`,
#                  stdout dropped, stderr in $tmp/NAME.err, a failed run never stops the
#                  script (a missing results.json is said on stderr); prints
#                  $tmp/NAME/results.json;
#   perf_value RESULTS NAME [LABEL=VALUE...]   prints the value of the first metric record
#                  NAME in RESULTS (results.json) whose labels match; fails when there is none;
#   perf_need_root WHY   prints "skipped: needs root (WHY)" and exits 0 unless run as root.
# Python helpers (results_summary.py, ...) live in perf/: `sys.path.insert(0, "perf")`.
# shellcheck shell=bash disable=SC2034  # the variables are the scripts'
set -euo pipefail

perf_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
perf_script=$(realpath -- "$0")
cb=$(realpath -m -- "${CHAOSBENCH:-$perf_root/build/bin/chaosbench}")
if [ ! -f "$cb" ] || [ ! -x "$cb" ]; then
  echo "$(basename "$0"): no executable chaosbench at $cb (scripts/build.sh, or CHAOSBENCH=PATH)" >&2
  exit 3
fi
perf_bin_dir=$(dirname "$cb")
cd "$perf_root"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perf-$(basename "$0" .sh).XXXXXX")
perf_keep_tmp=0
perf_exit_commands=()
perf_on_exit() { perf_exit_commands+=("$1"); }
perf_exit_() {
  local c
  for c in "${perf_exit_commands[@]}"; do eval "$c" || true; done
  [ "$perf_keep_tmp" = 1 ] || rm -rf "$tmp"
}
trap perf_exit_ EXIT

perf_run() {
  local scenario=$1 name=$2 rc=0
  shift 2
  "$cb" run "$scenario" --out "$tmp/$name" --quiet "$@" >/dev/null 2>"$tmp/$name.err" || rc=$?
  [ -f "$tmp/$name/results.json" ] ||
    echo "$name: no results.json (exit $rc): $(tail -1 "$tmp/$name.err")" >&2
  echo "$tmp/$name/results.json"
}

perf_value() {
  python3 - "$@" <<'PY'
import json, sys
path, name, want = sys.argv[1], sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
try:
    metrics = json.load(open(path))["metrics"]
except (OSError, ValueError) as e:
    sys.exit(f"{path}: {e}")
for m in metrics:
    if m["name"] == name and all(str(m["labels"].get(k)) == v for k, v in want.items()):
        print(m["value"])
        sys.exit(0)
sys.exit(f"{path}: no metric {name} with labels {want}")
PY
}

perf_need_root() {
  [ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (${1:-})"; exit 0; }
}
