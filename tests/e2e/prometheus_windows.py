#!/usr/bin/env python3
"""Compares the fault windows Prometheus saw with the ones a run's timeline.jsonl records.

Usage: prometheus_windows.py TIMELINE QUERY_RANGE_JSON STEP_S SCRAPE_S

QUERY_RANGE_JSON is Prometheus's answer to /api/v1/query_range for chaosbench_fault_active.
A window in Prometheus is a stretch of evaluations with value 1. Each fault occurrence
(fault_applied .. fault_reverted, wall times from workload_started's "wall") must match one
window: Prometheus sees the start after the apply by at most one scrape interval (plus a
step of the query), and the end within one scrape interval after the revert (less a step).
Every series must also read 0 somewhere before its first window. Prints one line per
finding; exits 1 when any does not match.
"""
import json
import sys

SLACK_S = 0.15  # a scrape's timestamp is taken just before the exposition is rendered


def timeline_windows(path):
    wall0, open_at, windows = None, {}, {}
    for line in open(path):
        e = json.loads(line)
        if e["event"] == "workload_started":
            wall0 = e["wall"]
        elif e["event"] == "fault_applied":
            open_at[e["fault"]] = e["t"]
        elif e["event"] == "fault_reverted":
            windows.setdefault(e["fault"], []).append((open_at.pop(e["fault"]), e["t"]))
    return {f: [(wall0 + a, wall0 + b) for a, b in w] for f, w in windows.items()}


def prometheus_windows(values):
    windows, start, prev_t, saw_zero_first = [], None, None, False
    for t, v in values:
        t = float(t)
        if v == "1" and start is None:
            start = t
        elif v != "1":
            if start is None and not windows:
                saw_zero_first = True
            if start is not None:
                windows.append((start, prev_t))
                start = None
        prev_t = t
    if start is not None:
        windows.append((start, prev_t))
    return windows, saw_zero_first


def main():
    timeline, answer, step, scrape = sys.argv[1], json.load(open(sys.argv[2])), float(sys.argv[3]), float(sys.argv[4])
    expected = timeline_windows(timeline)
    bad = 0
    series = {r["metric"]["name"]: r["values"] for r in answer["data"]["result"]}
    if not expected:
        print("FAILED: the timeline has no fault window")
        return 1
    for fault, want in sorted(expected.items()):
        got, zero_first = prometheus_windows(series.get(fault, []))
        print(f"{fault}: timeline {[(round(a, 2), round(b, 2)) for a, b in want]}, "
              f"prometheus {[(round(a, 2), round(b, 2)) for a, b in got]}")
        if not zero_first:
            print(f"FAILED: {fault} never read 0 before its first window")
            bad += 1
        if len(got) != len(want):
            print(f"FAILED: {fault}: {len(got)} window(s) in Prometheus, {len(want)} in the timeline")
            bad += 1
            continue
        for (a, b), (pa, pb) in zip(want, got):
            start_ok = a - SLACK_S <= pa <= a + scrape + step + SLACK_S
            end_ok = b - step - SLACK_S <= pb <= b + scrape + SLACK_S
            if not (start_ok and end_ok):
                print(f"FAILED: {fault}: window {pa:.2f}..{pb:.2f} vs {a:.2f}..{b:.2f} "
                      f"(allowed: one scrape interval of {scrape}s, step {step}s)")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
