#!/usr/bin/env bash
# The LLM load generator against the built-in synthetic server (first token 150 ms, then one
# token every 20 ms, 64 tokens): the ground truth. 1 stream and 200 streams, closed loop
# and open loop (measured TTFT p50/p99 vs 150 ms and TPOT p50 vs 20 ms), then 1200 streams over
# two servers (each server takes 1024 connections at most), round-robin: a stream gets 64
# chunks per 150 + 63 x 20 ms, so 1200 streams ask 54,500 chunks/s, above the 50,000
# chunks/s speed goal. Each prints the achieved chunks/s (over the whole run, ramp and
# drain included), the errors against the configured timing and the client's CPU time.
#   perf/workloads/llm_load.sh [SECONDS]   (default 10; needs a build; PORT=18090 and PORT+1 the servers')
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
seconds=${1:-10}
port=${PORT:-18090}
url="http://127.0.0.1:$port"
url2="http://127.0.0.1:$((port + 1))"
timing=(--engine synthetic --synthetic-first-token-us 150000 --synthetic-cadence-us 20000 --synthetic-tokens 64)
servers=()
for p in "$port" "$((port + 1))"; do
  "$cb" worker llm-serve --port "$p" --threads "${SERVER_THREADS:-2}" --max-running 4096 \
    --model synth "${timing[@]}" 2>/dev/null &
  servers+=($!)
done
perf_on_exit "kill ${servers[*]} 2>/dev/null; wait ${servers[*]} 2>/dev/null"

server_ticks() {  # utime + stime of both servers, in clock ticks
  local total=0 pid
  for pid in "${servers[@]}"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo "$total"
}

run() {  # run STREAMS SECONDS ENDPOINTS [ARRIVAL FLAGS]: one run (closed loop by default); prints its figures
  local streams=$1 secs=$2 endpoints=$3 out cpu before
  local arrival=(--arrival concurrency --concurrency "$streams")
  [ $# -gt 3 ] && arrival=("${@:4}")
  out=$(mktemp "$tmp/llm-load.XXXXXX")
  before=$(server_ticks)
  TIMEFORMAT='%U %S'
  cpu=$( { time "$cb" worker llm-load --endpoints "$endpoints" --model synth "${arrival[@]}" \
             --duration-ms "$((secs * 1000))" --input fixed:128 --output fixed:64 \
             --timeout-ms 30000 >"$out"; } 2>&1 )
  python3 - "$streams" "$cpu" "$out" "$(( $(server_ticks) - before ))" "$(getconf CLK_TCK)" <<'PY'
import json, sys
streams, cpu = int(sys.argv[1]), [float(x) for x in sys.argv[2].split()]
server_s = int(sys.argv[4]) / int(sys.argv[5])
s = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
t, p, i = s["ttft_ms"], s["tpot_ms"], s["itl_ms"]
print(f"{streams:5d} streams: {s['completed']} requests, {s['failed']} failed {s['failures']}, "
      f"{s['token_chunks_per_s']:.0f} chunks/s, {s['output_tokens_per_s']:.0f} tok/s\n"
      f"      TTFT p50 {t['p50']:.2f} ms (error {t['p50'] - 150:+.2f}), p99 {t['p99']:.2f} ms (error {t['p99'] - 150:+.2f}); "
      f"TPOT p50 {p['p50']:.3f} ms (error {p['p50'] - 20:+.3f}), p99 {p['p99']:.3f}; ITL p50 {i['p50']:.3f} p99 {i['p99']:.3f} ms\n"
      f"      client CPU {cpu[0]:.2f} s user + {cpu[1]:.2f} s sys over {s['elapsed_s']:.1f} s "
      f"= {100 * (cpu[0] + cpu[1]) / s['elapsed_s']:.0f} % of one core, "
      f"{1e6 * (cpu[0] + cpu[1]) / max(1, s['output_tokens']):.1f} us per chunk "
      f"(~{s['output_tokens'] / max(1e-9, cpu[0] + cpu[1]):,.0f} chunks/s per core); "
      f"servers {100 * server_s / s['elapsed_s']:.0f} % of one core")
PY
  rm -f "$out"
}

echo "ground truth: first token 150 ms, then 20 ms per token, 64 tokens (llm-load waits for readiness)"
run 1 6 "$url"
# Closed loop, every stream's answer takes the same 1.41 s: the 200 requests arrive as one
# burst every 1.41 s, and the server's admission of each burst is part of TTFT.
run 200 6 "$url"
# Open loop at 200 / 1.41 s = 142 requests/s: 200 streams in flight in the steady state.
echo "  (open loop: constant 142 requests/s, 200 streams in flight)"
run 200 6 "$url" --arrival constant --rate 142
echo "speed: 1200 streams over 2 servers ask 54,500 chunks/s (goal >= 50,000), $seconds s"
run 1200 "$seconds" "$url,$url2"
