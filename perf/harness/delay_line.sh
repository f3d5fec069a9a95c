#!/usr/bin/env bash
# The NFQUEUE delay line (faults/network/delay_line.h) on a 2-node virtual cluster:
# `chaosbench bench delay-line`, RUNS times, then the median of each figure over the runs.
# Goals: effect error |added RTT - asked| / asked <= 5% at 1, 5, 20 and 100 ms; one TCP
# stream (iperf3) >= 1 Gbit/s through a 5 ms delay on the receiving side.
# Root; ping and iperf3. TCP buffers are the namespaces' defaults (nothing is set).
#   perf/harness/delay_line.sh [RUNS] [extra options for chaosbench bench delay-line...]
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
perf_need_root "network namespaces, NFQUEUE"
runs=${1:-1}
shift || true
out=$tmp/rows.jsonl
status=0
for i in $(seq 1 "$runs"); do
  echo "== run $i of $runs"
  "$cb" bench delay-line "$@" | tee -a "$out" || status=1
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
lat, tput = {}, {}
for r in rows:
    if r["measurement"] == "latency":
        lat.setdefault(r["delay_ms"], []).append(r)
    else:
        tput.setdefault(r["delay_ms"], []).append(r)
med = lambda rs, k: statistics.median(r[k] for r in rs if r[k] is not None)
print(f"\nmedians over {sys.argv[2]} run(s)")
for d, rs in sorted(lat.items()):
    e = med(rs, "effect_error_pct")
    print(f"  delay {d:6g} ms: added {med(rs, 'added_ms'):8.3f} ms, effect error {e:5.2f}% "
          f"({'ok' if e <= 5 else 'MISS'}, goal <= 5%)")
for d, rs in sorted(tput.items()):
    g = med(rs, "gbit_per_s")
    label = f"delay line {d:g} ms" if d > 0 else "no delay line"
    goal = (" (" + ("ok" if g >= 1 else "MISS") + ", goal >= 1 Gbit/s)") if d > 0 else ""
    print(f"  iperf3, {label:>18}: {g:6.2f} Gbit/s{goal}")
PY
exit $status
