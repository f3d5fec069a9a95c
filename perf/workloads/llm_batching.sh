#!/usr/bin/env bash
# Continuous batching of the built-in LLM server's transformer engine: one server
# binary and model, launched twice — continuous batching (max_running 32) and one
# request at a time (max_running 1) — each driven by a closed-loop streaming client
# (perf/llm_stream_client.py) at rising concurrency. For each server the best output
# tokens/s whose TTFT p99 stays within the SLO is kept; the goal is >= 4x.
# Requests are decode-heavy (32-byte prompts, 256 tokens out, ignore_eos): the regime
# continuous batching is for; prefill-heavy loads gain less.
#   perf/workloads/llm_batching.sh [SLO_SECONDS (default 2)] [POINT_SECONDS (default 20)]
#   (needs a build: scripts/build.sh; no root; about 3 minutes)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
slo=${1:-2}
point=${2:-20}
pid=
# shellcheck disable=SC2016  # $pid as it is at exit
perf_on_exit '[ -z "$pid" ] || kill "$pid" 2>/dev/null'
# ~200 MB of fp32 weights: a single stream is bound by memory bandwidth, a batch by FLOPs.
model=(--layers 8 --dim 768 --heads 12 --kv-heads 4 --ffn 2048 --context 1024 --kv-blocks 2048 --block-size 16
       --max-batched-tokens 256 --max-waiting 256 --engine-threads "$(nproc)")
prompt=32 answer=256

serve() {  # max_running -> sets $pid and $port
  : >"$tmp/server-$1.log"
  "$cb" worker llm-serve --port 0 "${model[@]}" --max-running "$1" 2>"$tmp/server-$1.log" &
  pid=$!
  port=
  for _ in $(seq 600); do
    port=$(sed -n 's/^llm-serve: .* on [0-9.]*:\([0-9]*\)$/\1/p' "$tmp/server-$1.log")
    [ -n "$port" ] && return
    sleep 0.1
  done
  echo "the server did not start:"; cat "$tmp/server-$1.log"; exit 1
}

sweep() {  # max_running concurrency... -> one JSON line per point in $tmp/sweep-MAX
  serve "$1"
  head -1 "$tmp/server-$1.log"
  local max=$1; shift
  for c in "$@"; do
    python3 perf/llm_stream_client.py "$port" "$c" "$point" "$prompt" "$answer" | tee -a "$tmp/sweep-$max"
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}

sweep 1 1 2 4
sweep 32 1 4 8 16 32
python3 - "$tmp/sweep-1" "$tmp/sweep-32" "$slo" <<'PY'
import json, sys
slo = float(sys.argv[3])
def best(path):
    points = [json.loads(l) for l in open(path)]
    ok = [p for p in points if p["ttft_p99"] <= slo and p["failures"] == 0]
    return points, max(ok, key=lambda p: p["tokens_per_s"]) if ok else None
print(f"\n{'server':<22} {'clients':>7} {'tokens/s':>9} {'TTFT p50':>9} {'TTFT p99':>9} {'TPOT p50':>9}")
bests = {}
for name, path in (("one at a time (1)", sys.argv[1]), ("continuous (32)", sys.argv[2])):
    points, b = best(path)
    bests[name] = b
    for p in points:
        mark = " *" if p is b else ""
        print(f"{name:<22} {p['concurrency']:>7} {p['tokens_per_s']:>9.1f} {p['ttft_p50']:>8.3f}s {p['ttft_p99']:>8.3f}s "
              f"{p['tpot_p50'] * 1e3:>7.1f}ms{mark}")
one, cont = bests["one at a time (1)"], bests["continuous (32)"]
if one and cont:
    print(f"\ncontinuous batching: {cont['tokens_per_s'] / one['tokens_per_s']:.1f}x the output tokens/s of one at a time "
          f"at TTFT p99 <= {slo:g} s (goal >= 4x); * marks each server's best point within the SLO")
else:
    print(f"\nno point within TTFT p99 <= {slo:g} s for one of the servers")
PY
