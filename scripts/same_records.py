#!/usr/bin/env python3
"""Compares two chaosbench runs of one scenario by their records, not their values.

    same_records.py [--name NAME] [--top N] [--strict-checks] OLD_SIDE NEW_SIDE

A side is what scripts/same-records.sh leaves: rc, seconds, console.log and run/ (the --out
of `chaosbench run`; for a sweep run/point-NN/ and run/sweep.json). Records, which a
refactoring must not change: exit code; verdict; scenario name, cluster kind, backends;
phases; metric records (name + labels, phase included) with unit, better-direction and
whether stats exist; series names; faults (name, occurrence, type, targets, backend,
reversible, applied, reverted, error or not, effect keys); processes (role, rank, node,
restart, ended by a fault; not pids, times or exit codes); checks (metric, labels, op,
limit, status, value or none); report files (not checkpoints). Values never fail: the
medians (p50, else value) that moved most are printed as noise, old / new / ratio.
Prints SAME or DIFFERENT on the first line; exit 0 SAME, 1 DIFFERENT. Standard library only.

Tolerated, because running the same binary twice on this loaded 2-core machine shows them
to depend on timing, and only these (each named on the SAME line when it applies):
- A check flipped by its own value crossing the limit (demo: train/straggler_score <= 0.75
  fails under CPU load; gpu-slowdown's throughput_retention), with the verdict and exit code
  that such flips alone explain (pass/0 vs fail/1, reason "N check(s) failed").
  --strict-checks or SAME_RECORDS_STRICT_CHECKS=1 makes them differences.
- Phases at the end that one side lacks (command-example: its 500 ms marker at step 20 of
  40 ends before or after the workload does, so recovery:mid-run comes and goes), with
  the records labelled with them.
- comm/*, ckpt/* and train/straggler_score records of a phase (baseline, fault or recovery
  window) on one side only whose "overall" record both have: phases are time windows, and
  whether one sees a size (collective-demo walks sizes in time; a 1 s pause completes one
  size or none), a checkpoint save (gpu-slowdown's step-50 save lands in the 15 s baseline
  or after it) or enough steps for a straggler score (gpu-hang) depends on speed. Not when
  a phase lacks over a quarter of what the fullest phase holds: then they were lost.
  In a fault window train/* and resilience/throughput_retention too: a fault that ends a
  rank mid-step (gpu-xid-restart's Xid) leaves one step in its window or none, by where
  in the step it lands (seen both ways with one binary, run after run).
- Which ranks of a life that a restart followed were "ended by fault" (gpu-xid-restart:
  when the Xid's rank dies, a peer may exit first on the broken ring and be judged the
  failure; the others are then stopped "by the fault"). For those lives only whether a
  fault ended some rank of that generation is compared; each rank's last life is exact.
  Exit codes and signals are never records (the same race decides exit 3 vs SIGTERM).
"""
import argparse
import json
import math
import os
import re
import sys

SECTIONS = ("run", "phases", "faults", "processes", "checks", "metrics", "series")
# Records made from a few samples, which a time window may or may not catch (below).
SPORADIC = ("comm/", "ckpt/", "train/straggler_score")
# The same in a fault window only: a fault that ends a rank mid-step leaves one step or
# none in its window, by where in the step it lands.
SPORADIC_IN_FAULT = ("train/", "resilience/throughput_retention")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def key(labels):  # labels as a sorted, hashable tuple; values JSON-encoded, so 1 != "1"
    return tuple(sorted((k, json.dumps(v)) for k, v in (labels or {}).items()))


def phase_of(k):
    return json.loads(dict(k[1]).get("phase", "null")) or ""


def show(section, k):
    if section in ("metrics", "series", "checks"):
        inner = ",".join(f"{n}={json.loads(v)}" for n, v in k[1])
        return f"{k[0]}{{{inner}}}" + (f" {k[2]} {k[3]}" if section == "checks" else "")
    return " ".join(str(x) for x in k)


def records(r):
    """{section: {identity: attributes}} of one results.json."""
    env = r.get("environment", {})
    procs = {}
    for p in r.get("processes", []):
        procs.setdefault((p.get("role"), p.get("rank"), p.get("node"), p.get("restart")), []).append(
            bool(p.get("ended_by_fault")))
    return {
        "run": {("verdict",): r.get("verdict"), ("scenario",): r.get("scenario", {}).get("name"),
                ("cluster",): env.get("cluster"), ("backends",): json.dumps(env.get("backends"), sort_keys=True)},
        "phases": {(p["name"],): True for p in r.get("phases", [])},
        "metrics": {(m["name"], key(m.get("labels"))): (m.get("unit"), m.get("better"), "stats" in m)
                    for m in r.get("metrics", [])},
        "series": {(s["name"], key(s.get("labels"))): s.get("unit") for s in r.get("series", [])},
        "faults": {(f["name"], f.get("occurrence")): (
            f.get("type"), tuple(f.get("targets") or []), f.get("backend"), f.get("reversible"),
            "applied" if f.get("applied_at_s") is not None else "not applied",
            "reverted" if f.get("reverted_at_s") is not None else "not reverted",
            "error" if f.get("error") else "no error", tuple(sorted(f.get("effect") or {})))
            for f in r.get("faults", [])},
        "processes": processes(procs),
        # The value rides along for the flip test; only its presence is a record.
        "checks": {(c["metric"], key(c.get("labels")), c.get("op"), c.get("threshold")):
                   (c.get("status"), c.get("value") is not None, c.get("value")) for c in r.get("checks", [])},
    }


def processes(procs):
    """Lives by identity. Whether a fault ended a life is compared for each rank's last
    life; for the lives a restart followed, only per generation (see the tolerances)."""
    last = {}
    for role, rank, _, restart in procs:
        last[(role, rank)] = max(restart or 0, last.get((role, rank), 0))
    out, generations = {}, {}
    for (role, rank, node, restart), ended in procs.items():
        final = (restart or 0) == last[(role, rank)]
        out[(role, rank, node, restart)] = (len(ended),) + (("ended by fault" if any(ended) else "not ended by fault",) if final else ())
        if not final:
            generations[restart] = generations.get(restart, False) or any(ended)
    for restart, ended in generations.items():
        out[("generation", restart)] = "a fault ended a rank" if ended else "no fault ended a rank"
    return out


def medians(r):
    return {(m["name"], key(m.get("labels"))): (m.get("stats") or {}).get("p50", m.get("value"))
            for m in r.get("metrics", [])}


def files(run_dir):
    """Paths of the files written under run/; checkpoints are data, not reports."""
    found = set()
    for root, dirs, names in os.walk(run_dir):
        rel = os.path.relpath(root, run_dir)
        if "checkpoints" in rel.split(os.sep):  # data, not reports: only the folder counts
            dirs[:] = []
            found.add(rel + os.sep)
            continue
        found.update(os.path.normpath(os.path.join(rel, n)) for n in names)
    return found


def flipped_by_value(k, a, b):
    """Each side's status is what its own value against the limit says."""
    ok = (lambda v: v >= k[3]) if k[2] == ">=" else (lambda v: v <= k[3])
    return all(isinstance(v, (int, float)) and (st == "pass") == ok(v) for st, _, v in (a, b))


def trailing_phases(ra, rb):
    pa, pb = [p["name"] for p in ra.get("phases", [])], [p["name"] for p in rb.get("phases", [])]
    short, long_ = sorted((pa, pb), key=len)
    return set(long_[len(short):]) if long_[:len(short)] == short else set()


def window_records(ma, mb):
    overall = lambda k: (k[0], tuple(sorted((n, '"overall"' if n == "phase" else v) for n, v in k[1])))
    by_phase = {}
    for k in ma.keys() ^ mb.keys():
        sporadic = k[0].startswith(SPORADIC) or (phase_of(k).startswith("fault:") and k[0].startswith(SPORADIC_IN_FAULT))
        if sporadic and phase_of(k) not in ("", "overall") and overall(k) in ma and overall(k) in mb:
            by_phase.setdefault(phase_of(k), set()).add(k)
    most = max([sum(phase_of(k) == p for k in m) for m in (ma, mb) for p in {phase_of(k) for k in m}], default=0)
    return set().union(*[ks for ks in by_phase.values() if 4 * len(ks) <= most])


def compare_results(label, pa, pb, out):
    ra, rb = load(pa), load(pb)
    out["verdicts"].append((ra.get("verdict"), rb.get("verdict"), ra.get("reason", ""), rb.get("reason", "")))
    a, b = records(ra), records(rb)
    extra = trailing_phases(ra, rb)
    if extra:
        out["notes"].append(f"{label}trailing phase on one side only: {', '.join(sorted(extra))}")
    for recs in (a, b):
        recs["phases"] = {k: v for k, v in recs["phases"].items() if k[0] not in extra}
        for section in ("metrics", "series", "checks"):
            recs[section] = {k: v for k, v in recs[section].items() if phase_of(k) not in extra}
    window = window_records(a["metrics"], b["metrics"])
    if window:
        out["notes"].append(f"{label}{len(window)} records of a phase window on one side only")
        a["metrics"], b["metrics"] = ({k: v for k, v in m.items() if k not in window} for m in (a["metrics"], b["metrics"]))
    ended = lambda r: sorted((p.get("rank"), p.get("restart"), bool(p.get("ended_by_fault"))) for p in r.get("processes", []))
    if ended(ra) != ended(rb) and a["processes"] == b["processes"]:
        out["notes"].append(f"{label}which ranks a fault ended before a restart")
    for section in SECTIONS:
        sa, sb = a[section], b[section]
        for side, only in (("OLD", sorted(sa.keys() - sb.keys(), key=str)), ("NEW", sorted(sb.keys() - sa.keys(), key=str))):
            out["diffs"] += [f"{label}{section}: only {side} has {show(section, k)}" for k in only[:5]]
            if len(only) > 5:
                out["diffs"].append(f"{label}{section}: ... {len(only) - 5} more only in {side}")
        for k in sorted(sa.keys() & sb.keys(), key=str):
            va, vb = sa[k], sb[k]
            if section == "checks":
                if va[0] != vb[0] and not STRICT_CHECKS and flipped_by_value(k, va, vb):
                    out["flips"].append(f"{label}{show(section, k)}: OLD {va[0]} {num(va[2])}, NEW {vb[0]} {num(vb[2])}")
                    continue
                va, vb = va[:2], vb[:2]
            if va != vb:
                out["diffs"].append(f"{label}{section} {show(section, k)}: OLD {va} NEW {vb}")
    ma, mb = medians(ra), medians(rb)
    out["noise"] += [(label + show("metrics", k), ma[k], mb[k]) for k in ma.keys() & mb.keys()]


def num(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def deviation(a, b):
    if a == b:
        return 1.0, 0.0
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or a == 0 or b / a <= 0:
        return None, math.inf
    return b / a, abs(math.log(b / a))


def main():
    global STRICT_CHECKS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--name", default="")
    ap.add_argument("--strict-checks", action="store_true", help="a check flipped by its value is a difference")
    ap.add_argument("--top", type=int, default=int(os.environ.get("SAME_RECORDS_TOP", "8")),
                    help="noise rows: the medians that moved most (0 none, -1 all)")
    args = ap.parse_args()
    STRICT_CHECKS = args.strict_checks or os.environ.get("SAME_RECORDS_STRICT_CHECKS") == "1"
    read = lambda d, f: open(os.path.join(d, f)).read().strip() if os.path.exists(os.path.join(d, f)) else "?"
    rc_a, rc_b = read(args.old, "rc"), read(args.new, "rc")
    out = {"diffs": [], "noise": [], "flips": [], "verdicts": [], "notes": []}
    if rc_a != rc_b:
        out["diffs"].append(f"exit code: OLD {rc_a} NEW {rc_b}")
    da, db = os.path.join(args.old, "run"), os.path.join(args.new, "run")
    fa, fb = files(da), files(db)
    out["diffs"] += [f"file only in OLD: {f}" for f in sorted(fa - fb)[:10]]
    out["diffs"] += [f"file only in NEW: {f}" for f in sorted(fb - fa)[:10]]
    for rel in sorted(f for f in fa & fb if os.path.basename(f) == "results.json"):
        label = "" if rel == "results.json" else os.path.dirname(rel) + ": "
        compare_results(label, os.path.join(da, rel), os.path.join(db, rel), out)
    if "sweep.json" in fa & fb:  # points and what they measured; which one is best follows values
        sa, sb = load(os.path.join(da, "sweep.json")), load(os.path.join(db, "sweep.json"))
        pts = lambda s: [(p["label"], tuple(sorted(p.get("values", {})))) for p in s.get("points", [])]
        if pts(sa) != pts(sb) or sa.get("objective") != sb.get("objective") or (sa.get("best") is None) != (sb.get("best") is None):
            out["diffs"].append(f"sweep.json: OLD {pts(sa)} best {sa.get('best')} NEW {pts(sb)} best {sb.get('best')}")
        out["noise"].append(("sweep.json best point", sa.get("best"), sb.get("best")))
    diffs = out["diffs"]
    by_checks = lambda v, why: v == "pass" or (v == "fail" and re.match(r"\d+ checks? failed", why or ""))
    if out["flips"] and {rc_a, rc_b} <= {"0", "1"} and all(
            by_checks(va, wa) and by_checks(vb, wb) for va, vb, wa, wb in out["verdicts"]):
        diffs = [d for d in diffs if not d.startswith("exit code:") and " verdict: OLD" not in d]
    notes = out["notes"] + (["both: this host cannot, exit 3"] if rc_a == rc_b == "3" else [])
    notes += ["check flipped by its value: " + "; ".join(out["flips"])] if out["flips"] and not diffs else []
    secs = f"(OLD rc {rc_a} {read(args.old, 'seconds')} s, NEW rc {rc_b} {read(args.new, 'seconds')} s)"
    print(f"{args.name}: " + (f"DIFFERENT {secs}" if diffs else f"SAME {secs}" + "".join(f" ({n})" for n in notes)))
    for d in diffs[:40]:
        print(f"    {d}")
    if diffs and notes:
        print("    tolerated: " + "; ".join(notes))
    if len(diffs) > 40:
        print(f"    ... {len(diffs) - 40} more")
    rows = sorted(((deviation(a, b), name, a, b) for name, a, b in out["noise"]), key=lambda x: -x[0][1])
    rows = rows[:len(rows) if args.top < 0 else args.top]
    if rows:
        print(f"    noise, the {len(rows)} medians that moved most of {len(out['noise'])}: old / new / ratio")
        for (r, _), name, a, b in rows:
            print(f"      {name}: {num(a)} / {num(b)} / {num(r)}")
    return 1 if diffs else 0


STRICT_CHECKS = False

if __name__ == "__main__":
    sys.exit(main())
