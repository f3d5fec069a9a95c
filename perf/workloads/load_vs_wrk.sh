#!/usr/bin/env bash
# The load generator's speed goals against a trivial endpoint (perf/programs/
# trivial_http_server.cc, 2 threads): offline mode with the same connections as wrk
# (2 threads, 64 connections), alternately, 10 s each, RUNS times; prints the medians and
# the ratio (goals: >= 20k req/s and >= 0.5 x wrk). Then a server-mode run at a fixed QPS
# below capacity: achieved QPS should match the target, with the latency percentiles.
#   perf/workloads/load_vs_wrk.sh [RUNS] [SERVER_QPS]   (default 3 and 5000; needs a build and wrk;
#   PORT=18080 the server's)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${1:-3}
server_qps=${2:-5000}
port=${PORT:-18080}
url="http://127.0.0.1:$port"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
"$perf_bin_dir/trivial_http_server" --port "$port" --threads 2 >/dev/null &
server=$!
perf_on_exit "kill $server 2>/dev/null; wait $server 2>/dev/null"
sleep 0.5
wrk_rates=(); our_rates=()
for i in $(seq 1 "$runs"); do
  rate=$(wrk -t2 -c64 -d10s "$url/v2/health/live" | awk '/^Requests\/sec:/ {print $2}')
  wrk_rates+=("$rate")
  rate=$("$cb" worker load --endpoints "$url" --scenario offline --duration 10s \
           --connections 64 --path /v2/health/live | awk '/infer\/throughput/ {print $2}')
  our_rates+=("$rate")
  echo "run $i: wrk ${wrk_rates[-1]} req/s, chaosbench ${our_rates[-1]} req/s" >&2
done
python3 - "${wrk_rates[*]}" "${our_rates[*]}" <<'PY'
import statistics, sys
wrk = [float(x) for x in sys.argv[1].split()]
ours = [float(x) for x in sys.argv[2].split()]
mw, mo = statistics.median(wrk), statistics.median(ours)
print(f"wrk        median {mw:10.0f} req/s  (min {min(wrk):.0f}, max {max(wrk):.0f})")
print(f"chaosbench median {mo:10.0f} req/s  (min {min(ours):.0f}, max {max(ours):.0f})")
print(f"ratio {mo / mw:.2f} x wrk   goals: >= 20000 req/s {'MET' if mo >= 20000 else 'MISSED'}, "
      f">= 0.5 x wrk {'MET' if mo >= 0.5 * mw else 'MISSED'}")
PY
echo "server mode at $server_qps req/s for 10 s:"
"$cb" worker load --endpoints "$url" --scenario server --qps "$server_qps" --duration 10s \
  --connections 64 --path /v2/health/live | sed -n 1,4p
