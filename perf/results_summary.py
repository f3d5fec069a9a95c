"""Reading results.json files in the bench scripts: load a list of runs, find a metric
record, print a median summary with the goal. Imported by perf/*/*.sh (python3 -)."""
import json
import statistics


def load(paths):
    out = []
    for p in paths.split():
        try:
            out.append(json.load(open(p)))
        except OSError:
            print(f"missing {p}: the run failed")
    return out


def metric(r, name, **labels):
    for m in r["metrics"]:
        if m["name"] == name and all(m["labels"].get(k) == v for k, v in {"phase": "overall", **labels}.items()):
            return m
    return None


def values(rs, name, key=None, **labels):
    """The metric's value (or stats[key]) in each run that has it."""
    out = []
    for r in rs:
        m = metric(r, name, **labels)
        if m is not None:
            out.append(m["stats"][key] if key else m["value"])
    return out


def summary(title, vals, unit, goal):
    vals = [v for v in vals if v is not None]
    if not vals:
        print(f"{title}: no value")
        return
    print(f"{title}: median {statistics.median(vals):.2f}{unit} (min {min(vals):.2f}, max {max(vals):.2f}, "
          f"n={len(vals)}); goal {goal}")


def report_failures(rs):
    for r in rs:
        if r["verdict"] != "pass":
            print(f"run {r.get('run_id')} ({r.get('scenario_name')}): {r['verdict']}: {r.get('reason')}")
