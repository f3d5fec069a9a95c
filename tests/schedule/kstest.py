#!/usr/bin/env python3
"""Seeded random fault arrivals against their distributions, with SciPy's kstest.

    kstest.py CHAOSBENCH_BINARY

For a Poisson process (mtbf 1.5 s) and a Weibull renewal process (scale 2 s, shape 0.7):
1,000 arrivals drawn by `chaosbench run S --dry-run --json`; their inter-arrival times
must pass a one-sample Kolmogorov-Smirnov test against the exponential (mean mtbf) and
the Weibull (scipy.stats.weibull_min) at alpha = 0.01. Also: the same seed prints the
same schedule byte for byte, another seed another, and the probability draw fires about
its share. Prints "skipped: ..." without SciPy.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    from scipy import stats
except ImportError:
    print("skipped: python3-scipy is not installed (scripts/bootstrap.sh installs it)")
    sys.exit(0)

ALPHA = 0.01


def scenario(arrivals, probability=None):
    fault = {"name": "soak", "type": "marker", "duration": "1ms", "arrivals": arrivals}
    if probability is not None:
        fault["probability"] = probability
    return {"schema_version": 1, "name": "arrivals", "timeout": "5h", "seed": 42,
            "cluster": {"nodes": 2}, "workload": {"kind": "collective"}, "faults": [fault]}


def schedule(binary, doc, seed=None):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        cmd = [binary, "run", path, "--dry-run", "--json"] + (["--seed", str(seed)] if seed is not None else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return out


def gaps(text):
    arrivals = [e["arrival_s"] for e in json.loads(text)["schedule"]]
    assert len(arrivals) == 1000, f"expected 1000 arrivals, got {len(arrivals)}"
    return [b - a for a, b in zip([0.0] + arrivals[:-1], arrivals)]


def main():
    binary = sys.argv[1]
    failures = []
    poisson = schedule(binary, scenario({"process": "poisson", "mtbf": "1.5s", "max_occurrences": 1000}))
    res = stats.kstest(gaps(poisson), "expon", args=(0, 1.5))
    print(f"poisson mtbf 1.5s: KS D = {res.statistic:.4f}, p = {res.pvalue:.3f}")
    if res.pvalue < ALPHA:
        failures.append(f"Poisson arrivals fail the KS test: p = {res.pvalue}")
    weibull = schedule(binary, scenario({"process": "weibull", "scale": "2s", "shape": 0.7, "max_occurrences": 1000}))
    res = stats.kstest(gaps(weibull), "weibull_min", args=(0.7, 0, 2.0))
    print(f"weibull scale 2s shape 0.7: KS D = {res.statistic:.4f}, p = {res.pvalue:.3f}")
    if res.pvalue < ALPHA:
        failures.append(f"Weibull arrivals fail the KS test: p = {res.pvalue}")
    # The wrong distribution must be told apart (the test has power here).
    wrong = stats.kstest(gaps(weibull), "expon", args=(0, 2.0))
    if wrong.pvalue >= ALPHA:
        failures.append(f"Weibull(0.7) arrivals pass as exponential: p = {wrong.pvalue}")
    if schedule(binary, scenario({"process": "poisson", "mtbf": "1.5s", "max_occurrences": 1000})) != poisson:
        failures.append("the same seed printed another schedule")
    if schedule(binary, scenario({"process": "poisson", "mtbf": "1.5s", "max_occurrences": 1000}), seed=43) == poisson:
        failures.append("--seed 43 printed the same schedule as seed 42")
    half = json.loads(schedule(binary, scenario({"process": "poisson", "mtbf": "1.5s", "max_occurrences": 1000}, 0.25)))
    fired = sum(1 for e in half["schedule"] if e["fires"])
    res = stats.binomtest(fired, 1000, 0.25)
    print(f"probability 0.25: {fired} of 1000 fired, binomial p = {res.pvalue:.3f}")
    if res.pvalue < ALPHA:
        failures.append(f"probability 0.25 fired {fired} of 1000 (binomial p = {res.pvalue})")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
