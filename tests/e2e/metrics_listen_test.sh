#!/usr/bin/env bash
# `run --metrics-listen` against Debian's Prometheus: the test starts a prometheus (1 s
# scrapes of the run's listener, storage in a temporary directory) and a short collective
# run with two fault windows; `promtool check metrics` accepts the exposition curl'd
# mid-run; afterwards a range query of chaosbench_fault_active over the run matches the
# fault windows of timeline.jsonl to within one scrape interval (tests/e2e/prometheus_windows.py).
# Also: a bad ADDR:PORT is exit 2, a port in use exit 3 before anything is made.
# Usage: metrics_listen_test.sh CHAOSBENCH_BINARY. Skips (with the reason) without
# prometheus, promtool, curl or python3. Stops what it started and removes its files on
# every exit.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: metrics_listen_test.sh CHAOSBENCH_BINARY}
# shellcheck source=tests/e2e/script_checks.sh
. "$root/tests/e2e/script_checks.sh"
for tool in prometheus promtool curl python3; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool (Debian: prometheus, curl, python3)"; exit 0; }
done
work=$(mktemp -d)
prom_pid='' run_pid='' holder_pid=''
cleanup() {
  for pid in $run_pid $holder_pid $prom_pid; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
prom_port=$(free_port)
scrape=1

cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: ${scrape}s
  scrape_timeout: ${scrape}s
scrape_configs:
  - job_name: chaosbench
    static_configs:
      - targets: ["127.0.0.1:$port"]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null || { echo "FAILED: prometheus did not start"; cat "$work/prometheus.log"; exit 1; }
# Prometheus hands new targets to its scrapers only every 5 s: the run starts once the
# target has been tried (and found down), so the scrapes cover the whole run.
scraping() {
  curl -sf "http://127.0.0.1:$prom_port/api/v1/targets" |
    python3 -c 'import json,sys; t=json.load(sys.stdin)["data"]["activeTargets"]; sys.exit(0 if t and t[0]["health"] != "unknown" else 1)'
}
for _ in $(seq 100); do scraping && break; sleep 0.2; done
scraping || { echo "FAILED: prometheus never scraped its target"; cat "$work/prometheus.log"; exit 1; }

# Two windows with baseline around them; a node pause is a real fault where this runs as
# root (cgroup freezer), a marker otherwise.
second='{"name": "mark2", "type": "marker", "at": "5s", "duration": "1500ms"}'
[ "$(id -u)" -eq 0 ] && second='{"name": "hang", "type": "node.pause", "target": {"nodes": [1]}, "at": "5s", "duration": "1500ms"}'
cat > "$work/s.json" <<JSON
{"schema_version": 1, "name": "metrics-listen", "cluster": {"nodes": 2},
 "workload": {"kind": "collective", "collectives": ["allreduce"], "algorithms": ["ring"],
              "sizes": {"min": "4KiB", "max": "64KiB", "factor": 16}, "warmup_iters": 1, "iters": 5, "duration": "8s"},
 "faults": [{"name": "mark", "type": "marker", "at": "1500ms", "duration": "2s"}, $second]}
JSON

"$bin" run "$work/s.json" --out "$work/out" --quiet --metrics-listen "127.0.0.1:$port" >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
# Mid-run (inside the first window): the exposition as Prometheus would read it.
sleep 2.5
curl -s -D "$work/headers" "http://127.0.0.1:$port/metrics" -o "$work/exposition.txt"
check "the exposition is served as text/plain version 0.0.4" grep -qi '^content-type: text/plain; version=0.0.4' "$work/headers"
check "promtool check metrics accepts it" promtool check metrics <"$work/exposition.txt"
check "the first window is active mid-run" grep -q '^chaosbench_fault_active{name="mark",type="marker",target="all"} 1$' "$work/exposition.txt"
check "the phase says so" grep -q '^chaosbench_phase{phase="fault:mark"} 1$' "$work/exposition.txt"
check "the workload's metrics are there with their rank" grep -q '^chaosbench_comm_latency{rank="0",' "$work/exposition.txt"
check "another path is 404" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 404
wait "$run_pid"
rc=$?
run_pid=
check "the run passed (exit 0, got $rc)" test "$rc" -eq 0
check "nothing listens after the run" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 000

# The range query over the run, with a step well under the scrape interval.
start=$(python3 -c 'import json,sys; print(next(json.loads(l)["wall"] for l in open(sys.argv[1]) if "\"workload_started\"" in l) - 3)' "$work/out/timeline.jsonl")
end=$(python3 -c 'import time; print(time.time())')
step=0.1
sleep $((scrape + 1))  # the scrapes up to the end are in
curl -sf "http://127.0.0.1:$prom_port/api/v1/query_range" --data-urlencode 'query=chaosbench_fault_active' \
  --data-urlencode "start=$start" --data-urlencode "end=$end" --data-urlencode "step=$step" >"$work/range.json"
check "Prometheus's fault windows match timeline.jsonl within one scrape interval" \
  python3 "$root/tests/e2e/prometheus_windows.py" "$work/out/timeline.jsonl" "$work/range.json" "$step" "$scrape"
curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode 'query=max_over_time(chaosbench_phase{phase="recovery"}[1m])' \
  --data-urlencode "time=$end" >"$work/phase.json"
check "Prometheus saw the recovery phase after the faults" grep -q '"value":\[[0-9.]*,"1"\]' "$work/phase.json"

# Bad input and a port in use, before anything is made.
"$bin" run "$work/s.json" --out "$work/bad" --quiet --metrics-listen "nowhere:99999" >/dev/null 2>"$work/bad.err"
check "a bad ADDR:PORT is a usage error (exit 2)" test $? -eq 2
check "which says what is expected" grep -q "expected ADDR:PORT" "$work/bad.err"
python3 -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$port" &
holder_pid=$!
sleep 0.3
"$bin" run "$work/s.json" --out "$work/busy" --quiet --metrics-listen "127.0.0.1:$port" >/dev/null 2>"$work/busy.err"
check "a port in use is exit 3" test $? -eq 3
check "before the run directory is made" test ! -e "$work/busy"
check "saying why" grep -q "cannot listen on 127.0.0.1:$port" "$work/busy.err"

[ "${failures:-0}" -eq 0 ] || { echo "--- run.err"; tail -20 "$work/run.err"; echo "--- exposition"; head -60 "$work/exposition.txt"; }
end_checks
