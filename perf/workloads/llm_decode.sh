#!/usr/bin/env bash
# Single-stream decode of the built-in LLM server's transformer engine against the
# memory-bandwidth bound: decoding one sequence reads every weight once per token, so
# tokens/s can be at most (STREAM triad bandwidth) / (weight bytes per token). The triad
# is measured in the same run (`chaosbench bench micro --filter mem_bw`, every hardware
# thread, as many as the engine computes with). fp32 and int8 (per-channel weights, VNNI where
# the CPU has it) of one model of 1.4 GB in fp32, 360 MB in int8: both well past the
# last-level cache (a 90 MB int8 model ran at twice the "bound" here: it stayed cached).
# Goal: >= 50% of the bound for both.
#   perf/workloads/llm_decode.sh [ANSWER_TOKENS (default 64)]
#   (needs a build: scripts/build.sh; no root; about a minute)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
answer=${1:-64}
threads=$(nproc)
pid=
# shellcheck disable=SC2016  # $pid as it is at exit
perf_on_exit '[ -z "$pid" ] || kill "$pid" 2>/dev/null'
model=(--layers 8 --dim 2048 --heads 16 --kv-heads 4 --ffn 5632 --context 1024 --kv-blocks 256 --block-size 16
       --engine-threads "$threads")

"$cb" bench micro --filter mem_bw --out "$tmp/micro" >/dev/null 2>&1 || true
triad=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(max(m["value"] for m in r["metrics"] if m["name"]=="compute/mem_bw" and m["labels"].get("threads")==int(sys.argv[2])))' \
  "$tmp/micro/results.json" "$threads")

decode() {  # dtype -> "MB tokens/s"
  : >"$tmp/server-$1.log"
  "$cb" worker llm-serve --port 0 "${model[@]}" --dtype "$1" 2>"$tmp/server-$1.log" &
  pid=$!
  local port=
  for _ in $(seq 600); do
    port=$(sed -n 's/^llm-serve: .* on [0-9.]*:\([0-9]*\)$/\1/p' "$tmp/server-$1.log")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "the server did not start:"; cat "$tmp/server-$1.log"; exit 1; }
  local mb
  mb=$(sed -n 's/.*(\([0-9.]*\) MB of weights).*/\1/p' "$tmp/server-$1.log")
  python3 perf/llm_stream_client.py "$port" 1 1 16 16 >/dev/null  # warm-up: pages touched
  python3 perf/llm_stream_client.py "$port" 1 1 16 "$answer" >"$tmp/decode-$1.json"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  echo "$mb $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["decode_tokens_per_s"])' "$tmp/decode-$1.json")"
}

fp32=$(decode fp32)
int8=$(decode int8)
python3 - "$triad" "$threads" $fp32 $int8 <<'PY'
import sys
triad, threads = float(sys.argv[1]), sys.argv[2]
print(f"STREAM triad ({threads} threads): {triad:.1f} GB/s")
print(f"{'dtype':<6} {'weights':>10} {'tokens/s':>9} {'bound':>9} {'of bound':>9} {'effective':>10}")
for name, mb, tps in (("fp32", sys.argv[3], sys.argv[4]), ("int8", sys.argv[5], sys.argv[6])):
    mb, tps = float(mb), float(tps)
    bound = triad * 1e3 / mb
    print(f"{name:<6} {mb:>7.1f} MB {tps:>9.1f} {bound:>9.1f} {100 * tps / bound:>8.0f}% {tps * mb / 1e3:>6.1f} GB/s")
print("goal: >= 50% of the bound for both")
PY
