#!/usr/bin/env bash
# What live probes and the Prometheus exposition cost the workload: busbw of a 4-rank
# 16 MiB ring allreduce repeated for DURATION (scenarios/allreduce-16mib.json), plain,
# against the same run with four probes every 1 s (a metric probe on comm/busbw with a
# stop condition that never fires, an http probe of the run's own /metrics, a command
# probe, an after probe) and `--metrics-listen` scraped every 1 s by curl. Runs alternate
# (which side goes first too), so both see the same machine noise. Prints each pair, the
# medians and their ratio (goal: the probed side >= 0.99 of the plain one).
#   perf/harness/probes_overhead.sh [PAIRS] [DURATION]   (default 7 pairs of 12s; needs a build)
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
pairs=${1:-7}
duration=${2:-12s}
scraper=""
# shellcheck disable=SC2016  # $scraper as it is at exit
perf_on_exit '[ -z "$scraper" ] || kill "$scraper" 2>/dev/null'
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

python3 - scenarios/allreduce-16mib.json "$tmp/probed.json" "$port" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "allreduce-16mib-probed"
s["probes"] = [
  {"name": "busbw", "kind": "metric", "metric": "comm/busbw", "stat": "mean", "window": "5s", "min": 0, "interval": "1s"},
  {"name": "exposition", "kind": "http", "url": f"http://127.0.0.1:{sys.argv[3]}/metrics", "interval": "1s"},
  {"name": "true", "kind": "command", "argv": ["true"], "interval": "1s"},
  {"name": "after", "kind": "metric", "metric": "comm/busbw", "mode": "after", "min": 0, "interval": "1s"},
]
s["abort"] = {"when": ["busbw"], "for": "30s"}
json.dump(s, open(sys.argv[2], "w"), indent=1)
EOF

busbw() { perf_value "$1/results.json" comm/busbw phase=overall; }
run_plain() {
  "$cb" run scenarios/allreduce-16mib.json --set "workload.duration=$duration" --out "$tmp/plain$1" --quiet >/dev/null
  busbw "$tmp/plain$1"
}
run_probed() {
  # The exposition scraped every second while the run goes, as a Prometheus would.
  (while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true; done) &
  scraper=$!
  "$cb" run "$tmp/probed.json" --set "workload.duration=$duration" --metrics-listen "127.0.0.1:$port" \
    --out "$tmp/probed$1" --quiet >/dev/null
  kill "$scraper" 2>/dev/null || true
  wait "$scraper" 2>/dev/null || true
  scraper=""
  busbw "$tmp/probed$1"
}

plain=()
probed=()
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then a=$(run_plain "$i"); b=$(run_probed "$i"); else b=$(run_probed "$i"); a=$(run_plain "$i"); fi
  plain+=("$a")
  probed+=("$b")
  echo "pair $i: plain $a GB/s, probes + exposition $b GB/s"
done
evaluations=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(", ".join("%s %d" % (p["name"], p["evaluations"]) for p in r["probes"]))' "$tmp/probed1/results.json")
echo "evaluations in one probed run: $evaluations"
python3 - "${plain[*]}" "${probed[*]}" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"median busbw: plain {ma:.3f} GB/s, probes + exposition {mb:.3f} GB/s, ratio {mb / ma:.4f} "
      f"(cost {100 * (1 - mb / ma):+.2f} %; goal < 1 %)")
EOF
