#!/usr/bin/env python3
"""The history gate's statistics against SciPy's (docs/history.md), through the real CLI.

Builds synthetic run-by-run histories (lognormal run-to-run noise of 2 %, numpy's seeded
generator), adds them with `chaosbench history add`, and checks what `history gate --json`
and `history show --json` say:
  1. each prediction interval against scipy.stats.t.ppf (mean -+ t * sd * sqrt(1 + 1/n) on
     log values), and each verdict against its rule;
  2. each step's split and statistic against scipy.stats.ttest_ind(equal_var=True) over
     every split of the (outlier-clipped, scipy.ndimage.median_filter mode="mirror") segment, its size
     against numpy's medians, and its permutation p-value against
     scipy.stats.permutation_test of the same statistic (within Monte Carlo error);
  3. the acceptance: a 10 % step in a 60-run history found at its index, and at most 1 of
     20 A/A histories of 60 runs with a step.
Usage: scipy_check.py CHAOSBENCH. Prints `skipped: <why>` and exits 0 without SciPy.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from scipy import ndimage, stats
except ImportError as e:  # Debian: python3-scipy (scripts/bootstrap.sh installs it)
    print(f"skipped: SciPy is missing ({e})")
    sys.exit(0)

BIN = sys.argv[1]
ALPHA = 0.01
MIN_SEGMENT = 3  # change_point.h: values on each side of a split
MAD_PER_SD = stats.norm.ppf(0.75)


def results(run_id, i, step_ms, testbed="ci-small", scenario="demo"):
    """A results.json with one sampled latency-like metric and one single value."""
    return {"schema_version": 1, "tool": {"name": "chaosbench", "version": "test"},
            "scenario": {"name": scenario},
            "environment": {"host": "h", "testbed": testbed, "cpu_model": "Xeon", "cpus": 2,
                            "cpu_flags": ["avx2"], "memory_bytes": 8 << 30, "gpus": [],
                            "git_commit": f"{i:040x}"},
            "verdict": "pass", "run_id": run_id, "started_at": f"2024-05-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
            "metrics": [
                {"name": "train/step_time", "unit": "ms", "better": "lower", "labels": {"phase": "overall"},
                 "value": step_ms, "stats": {"n": 100, "mean": step_ms, "stddev": 1, "min": step_ms * 0.9,
                                             "p50": step_ms, "p90": step_ms * 1.1, "p99": step_ms * 1.3,
                                             "max": step_ms * 2, "sum": step_ms * 100}},
                {"name": "train/throughput", "unit": "samples/s", "better": "higher",
                 "labels": {"phase": "overall"}, "value": 1000.0 / step_ms}]}


def make_history(work, name, factors):
    """Writes one results file per factor (step time 100 ms x factor); returns their paths."""
    os.makedirs(os.path.join(work, name), exist_ok=True)
    files = []
    for i, f in enumerate(factors):
        path = os.path.join(work, name, f"r{i:03d}.json")
        with open(path, "w") as out:
            json.dump(results(f"{name}-{i:03d}", i, 100.0 * f), out)
        files.append(path)
    return files


def run(*args, expect=(0,)):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    if p.returncode not in expect:
        sys.exit(f"chaosbench {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def clipped(x, clip=2.5):
    """change_point.h clip_outliers, on rows of x."""
    x = np.atleast_2d(x)
    med = ndimage.median_filter(x, size=(1, 5), mode="mirror")
    sigma = np.median(np.abs(np.diff(x, axis=1)), axis=1) / (MAD_PER_SD * math.sqrt(2))
    limit = (clip * sigma)[:, None]
    out = med + np.clip(x - med, -limit, limit)
    return np.where(sigma[:, None] > 0, out, x)


def split_statistics(x):
    """|Student's t| (ttest_ind, equal_var=True) of every split k of rows of x, k and m - k
    at least MIN_SEGMENT."""
    c = clipped(x)
    m = c.shape[1]
    return np.stack([np.abs(stats.ttest_ind(c[:, k:], c[:, :k], axis=1, equal_var=True).statistic)
                     for k in range(MIN_SEGMENT, m - MIN_SEGMENT + 1)], axis=1)


def check_interval(row):
    values = np.array(row["values"][row["interval_from"]:])
    pi = row["interval"]
    assert pi["scale"] == "log", row["name"]
    logs = np.log(values)
    n = len(logs)
    t = stats.t.ppf(1 - ALPHA / 2, n - 1)
    half = t * np.std(logs, ddof=1) * math.sqrt(1 + 1 / n)
    assert close(pi["t_quantile"], t), (pi["t_quantile"], t)
    assert close(pi["low"], math.exp(logs.mean() - half)), (pi["low"], math.exp(logs.mean() - half))
    assert close(pi["high"], math.exp(logs.mean() + half)), (pi["high"], math.exp(logs.mean() + half))
    worse = 1 if row["better"] == "lower" else -1
    change = row["current"] / math.exp(logs.mean()) - 1
    assert close(row["change"], change), (row["change"], change)
    outside = row["current"] > pi["high"] if worse > 0 else row["current"] < pi["low"]
    if outside and worse * change > row["tolerance"]:
        assert row["status"] == "fail", row
    elif row["status"] == "fail":
        raise AssertionError(f"a FAIL that is not outside the interval and beyond the tolerance: {row}")


def check_step(series, step, permutations=19999):
    """The step's split, |t|, size and permutation p-value against SciPy."""
    begin, end = step["segment"]
    seg = np.log(np.array(series[begin:end]))
    ts = split_statistics(seg)[0]
    k = int(np.argmax(ts)) + MIN_SEGMENT
    assert begin + k == step["index"], (begin + k, step["index"])
    assert close(step["statistic"], ts[k - MIN_SEGMENT]), (step["statistic"], ts[k - MIN_SEGMENT])
    return stats.permutation_test((seg,), lambda x, axis: split_statistics(x).max(axis=1), vectorized=True,
                                  permutation_type="pairings", n_resamples=permutations, alternative="greater",
                                  random_state=21).pvalue


def check_gate(work):
    rng = np.random.default_rng(1)
    # 30 runs with a 10 % slowdown from run 18 on (accepted since), then two currents:
    # one at the new level (WARN naming run 18) and one 10 % slower still (FAIL).
    factors = np.exp(rng.normal(0, 0.02, 31)) * np.where(np.arange(31) >= 18, 1.10, 1.0)
    files = make_history(work, "gate", factors)
    run("history", "add", f"{work}/store", *files[:30])
    for current, expected in ((files[30], "warn"), (None, "fail")):
        if current is None:
            current = os.path.join(work, "gate", "slower.json")
            with open(current, "w") as out:
                json.dump(results("gate-slower", 31, 100 * 1.1 * 1.1), out)
        g = json.loads(run("history", "gate", f"{work}/store", current, "--json", expect=(0, 1)).stdout)
        assert g["verdict"] == expected, (g["verdict"], expected)
        for row in g["metrics"]:
            check_interval(row)
            for step in row["steps"]:
                series = row["values"]
                p_scipy = check_step(series, step)
                assert step["p_value"] < ALPHA and p_scipy < ALPHA, (step["p_value"], p_scipy)
                assert step["run_id"] == "gate-018", step
                size = math.exp(np.median(np.log(series[step["index"]:step["segment"][1]]))
                                - np.median(np.log(series[step["segment"][0]:step["index"]]))) - 1
                if len(row["steps"]) == 1:
                    assert close(step["size"], size, 1e-9), (step["size"], size)
        print(f"gate ({len(g['metrics'])} rows, {expected}): intervals match scipy.stats.t.ppf to 1e-9, "
              "the step at run 18 matches ttest_ind and permutation_test")


def check_p_values(work):
    """Moderate p-values (where the estimate is least precise) against permutation_test."""
    worst = 0.0
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        step = [0.0, 0.02, 0.03, 0.04, 0.05][seed]
        factors = np.exp(rng.normal(0, 0.02, 31)) * np.where(np.arange(31) >= 20, 1 + step, 1.0)
        files = make_history(work, f"p{seed}", factors)
        run("history", "add", f"{work}/store", *files)
        shown = json.loads(run("history", "show", f"{work}/store", "--scenario", "demo", "--testbed", "ci-small",
                               "--window", "31", "--metric", "train/throughput", "--json").stdout)
        # Every p<seed> history went into the same store; the newest 31 are this one's.
        row = shown[0]["metrics"][0]
        best = row["best_split"]
        series = row["values"]
        assert len(series) == 31 and row["run_ids"][0] == f"p{seed}-000", row["run_ids"][:2]
        p_scipy = check_step(series, {"segment": [0, 31], "index": best["index"], "statistic": best["statistic"]})
        p_ours = best["p_value"]
        # Both estimate the same p: the difference is Monte Carlo error of 1999 and 19999 draws.
        se = math.sqrt(p_scipy * (1 - p_scipy) / best["permutations"] + p_scipy * (1 - p_scipy) / 19999)
        assert abs(p_ours - p_scipy) <= 4 * se + 1e-3, (seed, p_ours, p_scipy)
        worst = max(worst, abs(p_ours - p_scipy) / max(se, 1e-12))
        print(f"p-value, step {step:.0%}: chaosbench {p_ours:.4f}, scipy.stats.permutation_test {p_scipy:.4f}")
    print(f"p-values agree within {worst:.1f} standard errors of the Monte Carlo estimate")


def check_acceptance(work):
    rng = np.random.default_rng(2021)
    factors = np.exp(rng.normal(0, 0.02, 60)) * np.where(np.arange(60) >= 37, 1.10, 1.0)
    run("history", "add", f"{work}/accept", *make_history(work, "step", factors))
    shown = json.loads(run("history", "show", f"{work}/accept", "--window", "60", "--json").stdout)
    for row in shown[0]["metrics"]:
        assert [s["index"] for s in row["steps"]] == [37], (row["name"], row["stat"], row["steps"])
        assert row["steps"][0]["run_id"] == "step-037"
        check_step(row["values"], row["steps"][0], permutations=1999)
    print("acceptance: the 10 % step of a 60-run history found at index 37 (run step-037) in every metric")
    with_step = 0
    for h in range(20):
        factors = np.exp(rng.normal(0, 0.02, 60))
        store = f"{work}/aa{h}"
        run("history", "add", store, *make_history(work, f"aa{h}", factors))
        shown = json.loads(run("history", "show", store, "--window", "60", "--metric", "train/step_time",
                               "--json").stdout)
        with_step += any(row["steps"] for row in shown[0]["metrics"] if row["stat"] == "p50")
    print(f"acceptance: {with_step} of 20 A/A histories of 60 runs with a step (at most 1 allowed)")
    assert with_step <= 1


def main():
    with tempfile.TemporaryDirectory() as work:
        check_gate(work)
        check_p_values(work)
        check_acceptance(work)
    print("history statistics agree with SciPy", stats.__name__, __import__("scipy").__version__)


if __name__ == "__main__":
    main()
