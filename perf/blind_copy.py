"""The blind copy of a results.json for perf/blind_trials.py: everything that
names the hidden fault removed, so `chaosbench diagnose` sees only what a user facing a
real slowdown would have: the series, the events that are not the fault's, the processes.
"""
import json
import re

FAULT_NAME = "x-hidden"  # neutral: says nothing of its type or target


def blind_copy(r, fault, strict=False):
    """results.json without what names the fault. `fault` is the scenario's fault (or None)."""
    b = json.loads(json.dumps(r))
    for k in ("faults", "schedule", "phases", "metrics", "checks"):
        b.pop(k, None)
    marks = [FAULT_NAME] + ([fault["type"]] if fault else [])
    if isinstance(b.get("scenario"), dict):
        b["scenario"].pop("faults", None)
    if isinstance(b.get("scenario_json"), str):
        try:
            sj = json.loads(b["scenario_json"])
            sj.pop("faults", None)
            b["scenario_json"] = json.dumps(sj)
        except ValueError:
            b.pop("scenario_json")

    def mentions(x):
        return any(m in json.dumps(x) for m in marks)

    b["events"] = [e for e in b.get("events", [])
                   if not str(e.get("name", "")).startswith("fault") and not mentions(e.get("fields", {}))]
    only_with_fault = ("node/cpu_throttled", "node/memory_used") if strict else ()
    b["series"] = [s for s in b.get("series", [])
                   if not str(s.get("name", "")).startswith("fault/") and not mentions(s.get("labels", {}))
                   and s.get("name") not in only_with_fault]
    for p in b.get("processes", []):
        p.pop("ended_by_fault", None)
    if mentions(b.get("reason", "")): b["reason"] = ""
    env = b.get("environment")
    if isinstance(env, dict):
        # The backend of each fault type the scenario used, and the cpu/memory node cgroups
        # made only for node.cpu_throttle / node.memory_limit, would say which kind it was.
        if isinstance(env.get("backends"), dict):
            env["backends"] = {k: v for k, v in env["backends"].items() if "." not in k}
        if isinstance(env.get("cluster"), str):
            env["cluster"] = re.sub(r", (cpu|memory)(?=[,)])", "", env["cluster"])
        env.pop("scenario_hash", None)
    return b
