#!/usr/bin/env bash
# The KServe server's HTTP layer (`worker serve`, 2 io threads, on the shared server core
# bench/http/) under wrk and under the built-in load generator, 64 keep-alive connections,
# SECONDS each: GET /v2/health/live (HTTP alone: no model), then infer requests of one row
# of the default MLP in offline mode (every connection keeps one in flight: HTTP and the
# dynamic batcher). Prints req/s and the server's CPU per request (utime + stime over the
# requests answered: steadier than req/s on a shared machine). The server is $cb; the
# load generator is CLIENT (default $cb): comparing two servers keeps one client, e.g.
#   CHAOSBENCH=OLD CLIENT=NEW perf/workloads/serve_http.sh; CHAOSBENCH=NEW perf/workloads/serve_http.sh
#   perf/workloads/serve_http.sh [SECONDS]   (default 10; needs a build and wrk; PORT=18100 the server's)
client=${CLIENT:+$(realpath -m -- "$CLIENT")}  # before lib.sh's cd: a relative path is the caller's
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
seconds=${1:-10}
port=${PORT:-18100}
client=${client:-$cb}
url="http://127.0.0.1:$port"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
"$cb" worker serve --port "$port" --threads 2 2>/dev/null &
server=$!
perf_on_exit "kill $server 2>/dev/null; wait $server 2>/dev/null"
for _ in $(seq 100); do curl -sf "$url/v2/health/ready" >/dev/null && break; sleep 0.1; done
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
hz=$(getconf CLK_TCK)

report() {  # report NAME RATE TICKS: one line
  python3 -c 'import sys; name, rate, ticks, hz, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print(f"{name:34s} {rate:10.0f} req/s   server CPU {ticks / hz / secs * 100:5.0f} % of a core, {ticks / hz / max(rate * secs, 1) * 1e6:6.2f} us per request")' \
    "$1" "$2" "$3" "$hz" "$seconds"
}

before=$(server_ticks)
rate=$(wrk -t2 -c64 -d"${seconds}s" "$url/v2/health/live" | awk '/^Requests\/sec:/ {print $2}')
report "wrk, GET /v2/health/live" "$rate" "$(($(server_ticks) - before))"
before=$(server_ticks)
rate=$("$client" worker load --endpoints "$url" --scenario offline --duration "${seconds}s" --connections 64 \
         --path /v2/health/live | awk '/infer\/throughput/ {print $2}')
report "worker load, GET /v2/health/live" "$rate" "$(($(server_ticks) - before))"
before=$(server_ticks)
rate=$("$client" worker load --endpoints "$url" --scenario offline --duration "${seconds}s" --connections 64 \
         | awk '/infer\/throughput/ {print $2}')
report "worker load, infer (1 row)" "$rate" "$(($(server_ticks) - before))"
