#!/usr/bin/env bash
# `chaosbench report results.json --report bmf=FILE` against Bencher Metric Format's JSON
# Schema (tests/bmf/bmf.schema.json, with Debian's python3-jsonschema), for a training
# run's results (tests/data/train-results.json) and a collective one's
# (tests/golden/results.json); then the names and bounds the format asks for.
#   tests/e2e/bmf_test.sh CHAOSBENCH PYTHON
set -euo pipefail
bin=$1 python=$2
here=$(cd "$(dirname "$0")/.." && pwd)
"$python" -c 'import jsonschema' 2>/dev/null || { echo "skipped: python3-jsonschema is missing (scripts/bootstrap.sh installs it)"; exit 0; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for results in "$here/data/train-results.json" "$here/golden/results.json"; do
  name=$(basename "$results" .json)
  # The exit code is the run's verdict (the golden run failed a check): the file is what counts.
  "$bin" report "$results" --out "$out/$name" --report "bmf=$out/$name.bmf.json" >/dev/null || true
  [ -s "$out/$name.bmf.json" ] || { echo "no BMF file for $results"; exit 1; }
  "$python" - "$here/bmf/bmf.schema.json" "$out/$name.bmf.json" "$results" <<'PY'
import json, math, sys
import jsonschema
schema, bmf, results = (json.load(open(p)) for p in sys.argv[1:4])
jsonschema.validate(bmf, schema)
records = [m for m in results["metrics"] if math.isfinite(m["value"])]
measures = sum(len(v) for v in bmf.values())
assert measures == len(records), f"{measures} measures for {len(records)} records"
for benchmark, ms in bmf.items():
    assert benchmark.startswith(results["scenario"]["name"] + "/"), benchmark
    assert len(benchmark) <= 1024
    for measure, metric in ms.items():
        assert len(measure) <= 64, measure
        if "lower_value" in metric:
            assert metric["lower_value"] <= metric["value"] <= metric["upper_value"], (benchmark, measure, metric)
print(f"{sys.argv[3]}: {len(bmf)} benchmarks, {measures} measures, valid BMF")
PY
done
