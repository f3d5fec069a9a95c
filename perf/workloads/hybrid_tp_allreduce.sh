#!/usr/bin/env bash
# The trainer's tensor-parallel allreduce against the collective benchmark's, same size,
# same cluster, through `chaosbench run` (root): scenarios/hybrid-pipeline.json set to
# tp 2 × pp 1 on 2 nodes and a global batch of 128 (every TP message is a microbatch ×
# 1024 floats: 64 KiB with 8 microbatches of 16), then the collective workload's gloo
# ring allreduce of that size on 2 nodes. Prints comm/latency p50 of both (the trainer's: per step, the mean of its TP
# allreduces; p50 over steps and ranks) and their ratio.
#   perf/workloads/hybrid_tp_allreduce.sh
# shellcheck source=perf/lib.sh
. "$(dirname "$0")/../lib.sh"
train=$(perf_run scenarios/hybrid-pipeline.json train --set cluster.nodes=2 \
  --set workload.parallel.tp=2 --set workload.parallel.pp=1 --set workload.batch_size=128 --set workload.steps=200 \
  2>/dev/null)
cat >"$tmp/collective.json" <<'JSON'
{
  "schema_version": 1,
  "name": "tp-size-allreduce",
  "cluster": { "nodes": 2 },
  "workload": { "kind": "collective", "collectives": ["allreduce"], "algorithms": ["ring"],
                "sizes": { "min": "64KiB", "max": "64KiB" }, "warmup_iters": 20, "iters": 400 }
}
JSON
coll=$(perf_run "$tmp/collective.json" coll 2>/dev/null)
python3 - "$train" "$coll" <<'PY'
import json, statistics, sys
def latency(path, want_group):
    r = json.load(open(path))
    vals = [m["stats"]["p50"] for m in r["metrics"]
            if m["name"] == "comm/latency" and m["labels"].get("phase") == "overall"
            and m["labels"].get("bytes") == 65536 and (m["labels"].get("group") == "tp") == want_group]
    if not vals:
        sys.exit(f"{path}: no comm/latency of 64 KiB ({r.get('verdict')}: {r.get('reason', '')})")
    return statistics.median(vals)
tp, coll = latency(sys.argv[1], True), latency(sys.argv[2], False)
print(f"64 KiB allreduce, 2 ranks: trainer TP (direct exchange) p50 {tp:.1f} us, collective benchmark (gloo ring) p50 {coll:.1f} us, "
      f"ratio {tp / coll:.2f}")
PY
