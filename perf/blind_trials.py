#!/usr/bin/env python3
"""Blind fault localisation trials: `chaosbench diagnose` against hidden faults.

Each trial runs the built-in trainer (MLP [256, 1024, 1024, 16], global batch 1024, one rank
per node, no checkpoints, recovery none) on 4-8 namespaced nodes with one hidden fault,
drawn with Python's random.Random(SEED) (trial by trial, then the clean runs' sizes):
  nodes      uniform integer in [--nodes-min, --nodes-max]
  kind       uniform over the five kinds below
  start      `at` uniform in [12, 20] s after the workload starts; duration 25 s
  node.cpu_throttle on a random node          cpus uniform [0.05, 0.2]          truth: node <i>
  network.delay on a random link [a, b]       delay uniform [2, 10] ms, both    truth: link a-b
  network.delay on all of one node's traffic  delay uniform [2, 10] ms, both    truth: nic <x>
  network.loss on a random link [a, b]        percent uniform [10, 30] %, both  truth: link a-b
  gpu.slowdown on a random rank               factor uniform [2, 4]             truth: gpu rank<r>
The trainer runs enough steps to last past the fault's end + 5 s (more when the fault slows
it; the table says when a run fell short). Clean runs: the same trainer, no fault, ~45 s.
Every scenario is checked with `chaosbench validate` first.

After each run the results.json is copied blind: no faults, schedule, phases, metrics or
checks, the scenario's faults removed, every event named fault* or mentioning the fault,
the fault types' backends and the cpu/memory cgroups in `environment` removed (--strict:
also the series only a fault's cgroups bring, node/cpu_throttled and node/memory_used);
then `chaosbench diagnose BLIND --json` names culprits. A trial's component is right when the
first culprit has the hidden fault's class and component; time to localise is that
culprit's first_named_s minus the fault's applied_at_s (from the run's own results.json),
counted as infinite for a trial whose first culprit is wrong or missing. A clean run passes
when nothing is named.

Acceptance (scaled to --trials and --clean): component right in >= 90 % (18 of 20), class
right in every trial, median time to localise <= 15 s, >= 90 % of clean runs (9 of 10)
name nothing. Writes DIR/summary.json and DIR/summary.md. Exit 0 when every line passes,
1 otherwise, 2 on a usage error.
"""
import argparse
import json
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blind_copy import blind_copy  # noqa: E402

KINDS = ("node.cpu_throttle", "link.delay", "node.delay", "link.loss", "gpu.slowdown")
FAULT_NAME = "x-hidden"  # neutral: says nothing of its type or target
FAULT_DURATION_S = 25.0
AFTER_FAULT_S = 5.0  # the run lasts at least this long after the fault's end
CLEAN_RUN_S = 45.0
MODEL = [256, 1024, 1024, 16]
BATCH = 1024


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="perf/harness/blind_trials.sh",
        description="Blind fault localisation trials: hidden faults, `chaosbench diagnose` on "
        "results.json without them.")
    p.add_argument("--seed", type=int, default=23, help="random.Random seed of every draw (23)")
    p.add_argument("--trials", type=int, default=20, help="trials with one hidden fault (20)")
    p.add_argument("--clean", type=int, default=10, help="fault-free runs (10)")
    p.add_argument("--nodes-min", type=int, default=4)
    p.add_argument("--nodes-max", type=int, default=8)
    p.add_argument("--out", help="directory for every run and the summary (default: a new temporary one)")
    p.add_argument("--binary", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                    "build", "bin", "chaosbench"),
                   help="chaosbench (default: build/bin/chaosbench of this checkout)")
    p.add_argument("--keep", action="store_true",
                   help="keep every file of each run (default: trace.json and report.html are removed)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the drawn trials, write and validate their scenarios, run nothing")
    p.add_argument("--strict", action="store_true",
                   help="also remove from the blind copy the series that exist only because of the fault's "
                        "cgroups (node/cpu_throttled, node/memory_used: a node has a cpu or memory cgroup only "
                        "when the scenario has a fault that needs it)")
    p.add_argument("--step-ms", type=float, default=55.0,
                   help="the trainer's step time at 4 nodes on a quiet machine, + 5 ms a node above; "
                        "the step count follows from it (55)")
    p.add_argument("--diagnose-timeout", type=float, default=120.0, help="seconds for one diagnose (120)")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    errors = []
    if a.trials < 0 or a.clean < 0: errors.append("--trials and --clean must be >= 0")
    if not 2 <= a.nodes_min <= a.nodes_max <= 64: errors.append("need 2 <= --nodes-min <= --nodes-max <= 64")
    if a.step_ms <= 0: errors.append("--step-ms must be > 0")
    if errors:
        p.print_usage(sys.stderr)
        for e in errors: print(f"blind_trials: {e}", file=sys.stderr)
        sys.exit(2)
    return a


# ---------------------------------------------------------------- the draws

def draw(rng, trials, clean, nmin, nmax):
    """Every random choice, trial by trial, then the clean runs; the same seed, the same list."""
    out = []
    for i in range(1, trials + 1):
        nodes = rng.randint(nmin, nmax)
        kind = rng.choice(KINDS)
        at_ms = round(rng.uniform(12.0, 20.0) * 1000)
        t = {"id": f"trial-{i:02d}", "n": i, "nodes": nodes, "kind": kind, "at_s": at_ms / 1000}
        if kind == "node.cpu_throttle":
            x = rng.randrange(nodes)
            cpus = round(rng.uniform(0.05, 0.2), 3)
            t.update(fault={"type": "node.cpu_throttle", "target": {"nodes": [x]}, "cpus": cpus},
                     target=f"node{x}", magnitude=f"{cpus:.3f} cpus", truth=("node", f"node{x}"))
        elif kind in ("link.delay", "link.loss"):
            a, b = rng.sample(range(nodes), 2)
            comp = f"node{min(a, b)}-node{max(a, b)}"
            if kind == "link.delay":
                us = round(rng.uniform(2.0, 10.0) * 1000)
                t.update(fault={"type": "network.delay", "target": {"links": [[a, b]]}, "direction": "both",
                                "delay": f"{us}us"}, magnitude=f"{us / 1000:.2f} ms")
            else:
                pct = round(rng.uniform(10.0, 30.0), 1)
                t.update(fault={"type": "network.loss", "target": {"links": [[a, b]]}, "direction": "both",
                                "percent": f"{pct}%"}, magnitude=f"{pct:.1f} %")
            t.update(target=f"link {a}-{b}", truth=("link", comp))
        elif kind == "node.delay":
            x = rng.randrange(nodes)
            us = round(rng.uniform(2.0, 10.0) * 1000)
            t.update(fault={"type": "network.delay", "target": {"nodes": [x]}, "direction": "both",
                            "delay": f"{us}us"},
                     target=f"node{x} (all links)", magnitude=f"{us / 1000:.2f} ms", truth=("nic", f"node{x}"))
        else:
            r = rng.randrange(nodes)  # one rank per node: rank r is on node r
            factor = round(rng.uniform(2.0, 4.0), 2)
            t.update(fault={"type": "gpu.slowdown", "target": {"ranks": [r]}, "factor": factor},
                     target=f"rank{r}", magnitude=f"x{factor:.2f}", truth=("gpu", f"rank{r}"))
        t["fault"] = {"name": FAULT_NAME, **t["fault"], "at": f"{at_ms}ms", "duration": f"{FAULT_DURATION_S:g}s"}
        out.append(t)
    for i in range(1, clean + 1):
        out.append({"id": f"clean-{i:02d}", "n": i, "nodes": rng.randint(nmin, nmax), "kind": "clean",
                    "at_s": None, "fault": None, "target": "-", "magnitude": "-", "truth": None})
    return out


def step_estimate_s(nodes, step_ms):
    return (step_ms + 5.0 * (nodes - 4)) / 1000


def scenario(t, seed, step_ms):
    end_s = t["at_s"] + FAULT_DURATION_S + AFTER_FAULT_S + 3.0 if t["fault"] else CLEAN_RUN_S
    steps = math.ceil(end_s / step_estimate_s(t["nodes"], step_ms))
    t["steps"] = steps
    s = {
        "schema_version": 1,
        "name": f"blind-{t['id']}",
        "description": "blind fault localisation trial (perf/harness/blind_trials.sh)",
        "seed": seed * 1000 + (500 if t["kind"] == "clean" else 0) + t["n"],
        "timeout": "300s",
        "cluster": {"nodes": t["nodes"], "ranks_per_node": 1, "mode": "namespaces"},
        "workload": {"kind": "train", "model": {"layers": MODEL}, "batch_size": BATCH, "steps": steps,
                     "recovery": {"mode": "none"}, "timeout": "60s"},
    }
    if t["fault"]: s["faults"] = [t["fault"]]
    return s


# ---------------------------------------------------------------- running

def run_cmd(argv, log_path, timeout):
    """Runs argv with stdout+stderr to log_path; on timeout, SIGINT (chaosbench reverts) then kill."""
    with open(log_path, "w") as log:
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGINT)
            try:
                return p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                return p.wait()
        except KeyboardInterrupt:
            # Ctrl-C reached chaosbench too (one process group): it stops and reverts by
            # itself. A SIGINT to this script alone is passed on after a moment.
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGINT)
                p.wait()
            raise


def live_ttl(r):
    best = None
    for m in r.get("metrics", []):
        if m.get("name") == "diagnosis/time_to_localise" and isinstance(m.get("value"), (int, float)):
            if best is None or m.get("labels", {}).get("phase") == "overall": best = m["value"]
    return best


def last_step_t(r):
    ts = [t for s in r.get("series", []) if s.get("name") == "train/step_time" for t in s.get("t", [])
          if isinstance(t, (int, float))]
    return max(ts) if ts else None


def diagnose(cb, blind_path, tdir, timeout):
    """Returns (rc, parsed JSON or None, stderr text)."""
    try:
        p = subprocess.run([cb, "diagnose", blind_path, "--json"], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, f"diagnose did not finish within {timeout:g} s"
    except OSError as e:
        return None, None, str(e)
    open(os.path.join(tdir, "diagnosis.json"), "w").write(p.stdout)
    open(os.path.join(tdir, "diagnose.stderr"), "w").write(p.stderr)
    try:
        d = json.loads(p.stdout)
        if not isinstance(d, dict): raise ValueError("not an object")
    except ValueError as e:
        return p.returncode, None, (p.stderr.strip() + f"\n(stdout is not the diagnosis JSON: {e})").strip()
    return p.returncode, d, p.stderr.strip()


def run_one(t, cb, out, args):
    tdir = os.path.join(out, t["id"])
    os.makedirs(tdir, exist_ok=True)
    rdir = os.path.join(tdir, "run")
    shutil.rmtree(rdir, ignore_errors=True)
    started = time.monotonic()
    t["rc"] = run_cmd([cb, "run", os.path.join(tdir, "scenario.json"), "--out", rdir, "--quiet"],
                      os.path.join(tdir, "run.log"), 420)
    t["wall_s"] = round(time.monotonic() - started, 1)
    if not args.keep:
        for f in ("trace.json", "report.html"):
            try:
                os.remove(os.path.join(rdir, f))
            except OSError:
                pass
    try:
        r = json.load(open(os.path.join(rdir, "results.json")))
    except (OSError, ValueError) as e:
        t["error"] = f"no results.json ({e}); chaosbench run exited {t['rc']}: " + tail(os.path.join(tdir, "run.log"))
        return
    t["verdict"] = r.get("verdict")
    t["duration_s"] = r.get("duration_s")
    t["last_step_s"] = last_step_t(r)
    t["live_ttl_s"] = live_ttl(r)
    if t["fault"]:
        f = next((f for f in r.get("faults", []) if f.get("name") == FAULT_NAME), None)
        t["applied_at_s"] = f.get("applied_at_s") if f else None
        t["reverted_at_s"] = f.get("reverted_at_s") if f else None
        t["fault_error"] = (f or {}).get("error") or ("" if f else "no fault record")
        need = (t["applied_at_s"] or t["at_s"]) + FAULT_DURATION_S + AFTER_FAULT_S
        t["long_enough"] = t["last_step_s"] is not None and t["last_step_s"] >= need
    else:
        t["long_enough"] = t["last_step_s"] is not None and t["last_step_s"] >= CLEAN_RUN_S - 5
    bdir = os.path.join(tdir, "blind")
    os.makedirs(bdir, exist_ok=True)
    blind_path = os.path.join(bdir, "results.json")
    json.dump(blind_copy(r, t["fault"], args.strict), open(blind_path, "w"))
    rc, d, err = diagnose(cb, blind_path, tdir, args.diagnose_timeout)
    t["diagnose_rc"] = rc
    if d is None:
        t["error"] = f"diagnose failed (exit {rc}): {short(err) or 'no output'} ({tdir}/diagnose.stderr)"
        return
    if err: t["diagnose_stderr"] = short(err)
    t["named"] = bool(d.get("named"))
    culprits = d.get("culprits") or []
    t["culprits"] = [{k: c.get(k) for k in ("class", "component", "start_s", "first_named_s", "confidence")}
                     for c in culprits[:3] if isinstance(c, dict)]
    if t["fault"]:
        top = t["culprits"][0] if t["culprits"] else {}
        cls, comp = t["truth"]
        t["class_ok"] = top.get("class") == cls
        t["component_ok"] = t["class_ok"] and top.get("component") == comp
        fn = top.get("first_named_s")
        if isinstance(fn, (int, float)) and t.get("applied_at_s") is not None:
            t["ttl_s"] = fn - t["applied_at_s"]
    else:
        t["clean_ok"] = not t["named"]


def short(text, n=3):
    """The first n lines of text, saying how many more there were."""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[:n]) + (f" | ... ({len(lines) - n} more lines)" if len(lines) > n else "")


def tail(path, n=3):
    try:
        return " | ".join(l.rstrip() for l in open(path).read().splitlines()[-n:])
    except OSError:
        return ""


# ---------------------------------------------------------------- output

def fmt(x, spec=".1f", none="-"):
    return none if x is None else format(x, spec)


def yes(x):
    return "-" if x is None else ("yes" if x else "NO")


def top_text(t):
    c = (t.get("culprits") or [None])[0]
    if t.get("error"): return "(error)"
    if not c: return "(none)"
    return f"{c.get('class')}:{c.get('component')}"


def trial_rows(ts):
    head = ["n", "nodes", "kind", "target", "magnitude", "at s", "rc", "top culprit", "conf",
            "component", "class", "ttl s", "live ttl s"]
    rows = []
    for t in ts:
        c = (t.get("culprits") or [{}])[0]
        rows.append([str(t["n"]), str(t["nodes"]), t["kind"], t["target"], t["magnitude"],
                     fmt(t.get("applied_at_s", t["at_s"]), ".2f"), fmt(t.get("rc"), "d"), top_text(t),
                     fmt(c.get("confidence"), ".2f"), yes(t.get("component_ok")), yes(t.get("class_ok")),
                     fmt(t.get("ttl_s"), ".1f"), fmt(t.get("live_ttl_s"), ".1f")])
    return head, rows


def clean_rows(cs):
    head = ["n", "nodes", "rc", "named", "top culprit", "conf", "pass"]
    rows = []
    for t in cs:
        c = (t.get("culprits") or [{}])[0]
        rows.append([str(t["n"]), str(t["nodes"]), fmt(t.get("rc"), "d"),
                     "-" if "named" not in t else ("yes" if t["named"] else "no"), top_text(t),
                     fmt(c.get("confidence"), ".2f"), yes(t.get("clean_ok"))])
    return head, rows


def text_table(head, rows):
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w[i]) for i, c in enumerate(cells)).rstrip()
    return "\n".join([line(head), line(["-" * x for x in w])] + [line(r) for r in rows])


def md_table(head, rows):
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] +
                     ["| " + " | ".join(r) + " |" for r in rows])


def totals(trials, cleans, ran):
    """The acceptance lines: (title, value text, goal text, pass or None when not judged)."""
    out = []
    n, c = len(trials), len(cleans)
    if n:
        comp = sum(1 for t in trials if t.get("component_ok"))
        cls = sum(1 for t in trials if t.get("class_ok"))
        need = math.ceil(0.9 * n)
        out.append(("right component named first", f"{comp}/{n}", f">= {need}/{n}", comp >= need if ran else None))
        out.append(("right class named first", f"{cls}/{n}", f"{n}/{n}", cls == n if ran else None))
        ttl = [t["ttl_s"] if t.get("component_ok") and t.get("ttl_s") is not None else math.inf for t in trials]
        med = statistics.median(ttl)
        right = [t["ttl_s"] for t in trials if t.get("component_ok") and t.get("ttl_s") is not None]
        note = f" (right ones: median {statistics.median(right):.1f} s, max {max(right):.1f} s)" if right else ""
        out.append(("median time to localise (wrong = inf)", f"{med:.1f} s{note}" if med != math.inf else "inf",
                    "<= 15 s", med <= 15.0 if ran else None))
        live = [t["live_ttl_s"] for t in trials if t.get("live_ttl_s") is not None]
        if live:
            out.append(("median live diagnosis/time_to_localise", f"{statistics.median(live):.1f} s (n={len(live)})",
                        "-", None))
    if c:
        ok = sum(1 for t in cleans if t.get("clean_ok"))
        need = math.ceil(0.9 * c)
        out.append(("clean runs naming nothing", f"{ok}/{c}", f">= {need}/{c}", ok >= need if ran else None))
    short = [t["id"] for t in trials + cleans if t.get("long_enough") is False]
    if short:
        out.append(("runs shorter than asked (fault end + 5 s; clean 40 s)", ", ".join(short), "none", None))
    return out


def verdict_text(v):
    return "-" if v is None else ("PASS" if v else "FAIL")


def report(all_runs, out, args, ran):
    trials = [t for t in all_runs if t["kind"] != "clean"]
    cleans = [t for t in all_runs if t["kind"] == "clean"]
    lines = []
    if trials:
        lines += ["trials:", text_table(*trial_rows(trials)), ""]
    if cleans:
        lines += ["clean runs:", text_table(*clean_rows(cleans)), ""]
    problems = [f"  {t['id']}: {t['error']}" for t in all_runs if t.get("error")]
    problems += [f"  {t['id']}: fault error: {t['fault_error']}" for t in all_runs if t.get("fault_error")]
    problems += [f"  {t['id']}: diagnose stderr: {t['diagnose_stderr']}" for t in all_runs if t.get("diagnose_stderr")]
    if problems: lines += ["problems:"] + problems + [""]
    tot = totals(trials, cleans, ran)
    w = max([len(x[0]) for x in tot] + [1])
    lines += ["totals:"] + [f"  {a.ljust(w)}  {b}  (goal {g})  {verdict_text(v)}" for a, b, g, v in tot]
    ok = all(v is not False for _, _, _, v in tot) and ran
    lines.append(f"acceptance: {'PASS' if ok else ('not judged (dry run)' if not ran else 'FAIL')}")
    print("\n".join(lines), flush=True)

    summary = {
        "seed": args.seed, "trials": len(trials), "clean": len(cleans),
        "nodes": [args.nodes_min, args.nodes_max], "binary": args.binary, "dry_run": not ran,
        "model": MODEL, "batch_size": BATCH, "fault_duration_s": FAULT_DURATION_S,
        "runs": all_runs,
        "totals": [{"line": a, "value": b, "goal": g, "pass": v} for a, b, g, v in tot],
        "pass": ok,
    }
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1, default=str)
    md = [f"# Blind fault localisation trials (seed {args.seed})", "",
          f"Trainer MLP {MODEL}, batch {BATCH}, {args.nodes_min}-{args.nodes_max} namespaced nodes; "
          f"each fault lasts {FAULT_DURATION_S:g} s from a start drawn in [12, 20] s. "
          f"Binary `{args.binary}`. Run directories under `{out}`.", ""]
    if trials: md += ["## Trials", "", md_table(*trial_rows(trials)), ""]
    if cleans: md += ["## Clean runs", "", md_table(*clean_rows(cleans)), ""]
    if problems: md += ["## Problems", ""] + [f"- {p.strip()}" for p in problems] + [""]
    md += ["## Totals", "", md_table(["line", "value", "goal", "verdict"],
                                     [[a, b, g, verdict_text(v)] for a, b, g, v in tot]), "",
           f"Acceptance: **{'PASS' if ok else ('not judged (dry run)' if not ran else 'FAIL')}**", ""]
    open(os.path.join(out, "summary.md"), "w").write("\n".join(md))
    return ok


def main(argv):
    args = parse_args(argv)
    cb = os.path.realpath(args.binary)
    if not (os.path.isfile(cb) and os.access(cb, os.X_OK)):
        print(f"blind_trials: no chaosbench binary at {args.binary} (scripts/build.sh, or --binary)", file=sys.stderr)
        return 2
    out = os.path.realpath(args.out) if args.out else tempfile.mkdtemp(prefix="cb-blind-trials.")
    os.makedirs(out, exist_ok=True)
    print(f"seed {args.seed} (random.Random), {args.trials} trials, {args.clean} clean runs, "
          f"nodes {args.nodes_min}-{args.nodes_max}; run directories in {out}", flush=True)
    runs = draw(random.Random(args.seed), args.trials, args.clean, args.nodes_min, args.nodes_max)
    for t in runs:
        tdir = os.path.join(out, t["id"])
        os.makedirs(tdir, exist_ok=True)
        path = os.path.join(tdir, "scenario.json")
        json.dump(scenario(t, args.seed, args.step_ms), open(path, "w"), indent=1)
        v = subprocess.run([cb, "validate", path], capture_output=True, text=True)
        if v.returncode != 0:
            print(f"blind_trials: {t['id']}: the generated scenario does not validate:\n{v.stdout}{v.stderr}",
                  file=sys.stderr)
            return 1
    if args.dry_run:
        for t in runs:
            fault = json.dumps(t["fault"]) if t["fault"] else "no fault"
            print(f"{t['id']}: {t['nodes']} nodes, {t['steps']} steps, {t['kind']} {t['target']} {t['magnitude']}"
                  f"{'' if t['at_s'] is None else ' at %.3f s' % t['at_s']}: {fault}")
        print(f"every scenario validates ({out}/*/scenario.json); nothing was run")
        return 0
    try:
        for t in runs:
            started = time.monotonic()
            run_one(t, cb, out, args)
            what = "clean" if t["kind"] == "clean" else f"{t['kind']} {t['target']} {t['magnitude']}"
            res = t.get("error") or (f"top {top_text(t)}" + (f", ttl {t['ttl_s']:.1f} s" if t.get("ttl_s") is not None else ""))
            print(f"{t['id']}: {t['nodes']} nodes, {what}: exit {t.get('rc')}, "
                  f"{time.monotonic() - started:.0f} s; {res}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: the summary covers the runs done so far", file=sys.stderr)
        report([t for t in runs if "rc" in t], out, args, ran=True)
        return 130
    return 0 if report(runs, out, args, ran=True) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
