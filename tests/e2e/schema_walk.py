#!/usr/bin/env python3
"""Holds scenarios/schema.json and the scenario parser to each other, both ways.

Run by CTest as

    python3 tests/e2e/schema_walk.py --binary PATH_TO_chaosbench --root REPO_ROOT

1. The corpus: every scenarios/*.json (not schema.json) and the probe scenarios made
   here (probe_scenarios(): every workload kind, cluster mode, trigger form, probe kind,
   scrape, mesh, sweep, and every fault type of `chaosbench faults --json` once per target
   form it takes, with all its parameters). `chaosbench validate --portable --accepted-keys`
   must accept each, and says which objects it read, at which JSON path, with which keys.
2. Coverage: every ObjectReader construction in harness/scenario/*.cc is visited (its path
   pattern, and its key list where the source spells it out), and every key of every object
   shape is given a value somewhere, so that validating the corpus checks its type. A miss
   fails unless UNREACHABLE names it with a reason.
3. Keys: at each object read, the sub-schema (following $ref, allOf, if/then/else and the
   oneOf/anyOf branches the instance validates against) must allow and type (not only
   `true`) every key the parser accepts, and list no key the parser refuses. Objects the
   parser reads as maps (labels, env, rename, sweep) list no fixed keys. The corpus is valid
   under the schema (draft 2020-12), and reaches every $defs entry.
4. Values: where the schema has an enum, or the parser a fixed set of strings, the parser
   is given "__bogus__" there (--set) and the choices its message lists must be the
   schema's enum; each integer key is given a value out of any range and the range the
   parser names must be the schema's (where it depends on the cluster, DYNAMIC_RANGES, the
   schema's need only hold it).
5. Fault types: each parameter's kind and each type's target forms are the registry's.
6. Docs: ```json examples in README.md and docs/*.md: whole scenarios are valid under the
   schema and `chaosbench validate`; fragments (members of a scenario, a fault, a probe,
   a check, a host...) under the matching sub-schema; others are listed as not scenario
   JSON.

Prints every disagreement (path pattern, key, which side lacks it); exit 1 on any.
Needs only the Python standard library and jsonschema (python3-jsonschema).
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import jsonschema

TIMEOUT_S = 20
BOGUS = "__bogus__"
GROUP_FORMS = ("pp_stage", "tp_group", "dp_replica")
ANNOTATIONS = {"description", "default", "examples", "title", "$comment", "deprecated"}
# Path expressions of ObjectReader constructions that are variables: the patterns each
# stands for, as the file's code builds them. A new one must be added here.
VARIABLE_PATHS = {
    ("check_parser.cc", "path"): ["checks[]"],
    ("cluster_parser.cc", "at"): ["cluster.hosts[]"],
    ("fault_parser.cc", "path"): ["faults[]"],
    ("fault_trigger_parser.cc", "path"): ["faults[].arrivals"],
    ("llm_load_parser.cc", "path"): ["workload.load.input", "workload.load.output"],
    ("probe_parser.cc", "path"): ["probes[]"],
    ("scrape_parser.cc", "path"): ["scrape[]"],
}
# Path patterns (or "pattern key") the corpus cannot reach, each with the reason.
UNREACHABLE = {}
# Integer keys whose range depends on the cluster (a node index is below cluster.nodes):
# the schema's static bound need only allow the parser's.
DYNAMIC_RANGES = {"node": "a node index", "min_nodes": "at most cluster.nodes"}
# Objects the parser reads key by key without an ObjectReader, and how the test checks them.
TARGET_PATTERN = "faults[].target"  # the registry's forms: check_registry


def join_path(parent, key):
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def pattern_of(path):
    return re.sub(r"\[\d+\]", "[]", path)


class Findings:
    """Disagreements, each once per (pattern, key, what), with the first example."""

    def __init__(self):
        self.items = {}

    def add(self, pattern, key, what, where=""):
        self.items.setdefault((pattern, key, what), where)

    def print(self):
        for (pattern, key, what), where in sorted(self.items.items()):
            at = f" key \"{key}\"" if key else ""
            print(f"DISAGREE {pattern or '(root)'}{at}: {what}" + (f"  [{where}]" if where else ""))


class Schema:
    """scenarios/schema.json, resolved against instances; remembers the $defs it reached."""

    def __init__(self, root):
        self.root, self.defs = root, root.get("$defs", {})
        self.reached = set()
        self.validators = {}

    def valid(self, schema, instance):
        if isinstance(schema, bool):
            return schema
        if id(schema) not in self.validators:
            doc = dict(schema, **{"$defs": self.defs})
            self.validators[id(schema)] = (schema, jsonschema.Draft202012Validator(doc))
        return self.validators[id(schema)][1].is_valid(instance)

    def applicable(self, schema, instance, out=None):
        """The sub-schemas that apply to `instance` at `schema`: itself, where its $ref,
        allOf and if/then/else lead, and the oneOf/anyOf branches it validates against (all
        of them when none does, so that the disagreement still shows)."""
        out = [] if out is None else out
        if not isinstance(schema, dict):
            return out
        out.append(schema)
        if "$ref" in schema:
            if not schema["$ref"].startswith("#/$defs/"):
                raise ValueError(f"{schema['$ref']}: this test follows only references into #/$defs/")
            name = schema["$ref"].removeprefix("#/$defs/")
            self.reached.add(name)
            self.applicable(self.defs[name], instance, out)
        for sub in schema.get("allOf", []):
            self.applicable(sub, instance, out)
        if "if" in schema:
            branch = "then" if self.valid(schema["if"], instance) else "else"
            self.applicable(schema.get(branch), instance, out)
        for word in ("oneOf", "anyOf"):
            branches = schema.get(word, [])
            for sub in [b for b in branches if self.valid(b, instance)] or branches:
                self.applicable(sub, instance, out)
        return out

    def child(self, applied, key, value):
        out = []
        for s in applied:
            props, patterns = s.get("properties", {}), s.get("patternProperties", {})
            hits = [props[key]] if key in props else []
            hits += [sub for pat, sub in patterns.items() if re.search(pat, key)]
            if not hits and isinstance(s.get("additionalProperties"), dict):
                hits = [s["additionalProperties"]]
            for sub in hits:
                self.applicable(sub, value, out)
        return out

    def item(self, applied, index, value):
        out = []
        for s in applied:
            prefix = s.get("prefixItems", [])
            sub = prefix[index] if index < len(prefix) else s.get("items")
            self.applicable(sub, value, out)
        return out

    def walk(self, instance):
        """(path, value, applied sub-schemas) for every value of `instance`."""
        stack = [("", instance, self.applicable(self.root, instance))]
        while stack:
            path, value, applied = stack.pop()
            yield path, value, applied
            if isinstance(value, dict):
                stack += [(join_path(path, k), v, self.child(applied, k, v)) for k, v in value.items()]
            elif isinstance(value, list):
                stack += [(join_path(path, i), v, self.item(applied, i, v)) for i, v in enumerate(value)]


def listed_keys(applied):
    return {k for s in applied for k, sub in s.get("properties", {}).items() if sub is not False}


def closed_by(applied):
    return [s for s in applied if s.get("additionalProperties") is False or s.get("unevaluatedProperties") is False]


def allows(s, key):
    return s.get("properties", {}).get(key, False) is not False or any(
        re.search(p, key) for p in s.get("patternProperties", {}))


def typed(applied, key):
    """True when some schema that applies to `key` constrains it (more than `true`)."""
    subs = [s["properties"][key] for s in applied if key in s.get("properties", {})]
    subs += [sub for s in applied for p, sub in s.get("patternProperties", {}).items() if re.search(p, key)]
    return any(isinstance(sub, dict) and set(sub) - ANNOTATIONS for sub in subs)


def enum_of(applied):
    """The strings of the enums that apply (consts are discriminators: left out); None if none."""
    values = [v for s in applied if "enum" in s for v in s["enum"]]
    return set(values) if values and all(isinstance(v, str) for v in values) else None


def kinds_of(applied):
    """The registry's parameter kinds a property's schema gives: quantities by their $defs."""
    quantities = {"duration": "duration", "positive_duration": "duration", "size": "size", "rate": "rate",
                  "percent": "percentage", "positive_percent": "percentage"}
    refs = {quantities.get(s["$ref"].removeprefix("#/$defs/"), "?") for s in applied if "$ref" in s}
    if refs:
        return refs
    kinds = set()
    for s in applied:
        t = s.get("type")
        kinds |= set(t) if isinstance(t, list) else {t} if t else set()
        if "enum" in s:
            kinds |= {type(v).__name__.replace("str", "string").replace("bool", "boolean") for v in s["enum"]}
    return kinds


def run(binary, *args, cwd=None):
    proc = subprocess.run([binary, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    return proc.returncode, proc.stdout, proc.stderr


def first_lines(text, n=3):
    return " | ".join([line for line in text.splitlines() if line.strip()][:n]) or "(nothing)"


def sample_value(fault_type, param):
    """A valid value of a registry parameter: its default, else one of its kind."""
    kind, default = param["kind"], param["default"]
    explicit = {("process.signal", "signal"): "SIGUSR1", ("network.delay", "delay"): "5ms"}
    if (fault_type, param["name"]) in explicit:
        return explicit[(fault_type, param["name"])]
    by_kind = {"duration": "2s", "rate": "100mbit", "size": "256MiB", "percentage": "1%", "boolean": True}
    if kind in by_kind:
        return by_kind[kind]
    if kind in ("integer", "number"):
        number = float(default) if default else 1.0
        return int(number) if kind == "integer" else number
    return default or "x"


TARGET_SAMPLES = {"all": True, "nodes": [0], "ranks": [1], "random": 1, "percent": "50%", "links": [[0, 1]],
                  "groups": [[0], [1]], "pp_stage": [0], "tp_group": [1], "dp_replica": [1]}


def fault_scenarios(registry):
    """One scenario per fault type: a fault per target form it takes, every parameter set."""
    out = {}
    for t in registry:
        forms = list(t["targets"]) + (list(GROUP_FORMS) if {"nodes", "ranks"} & set(t["targets"]) else [])
        params = {p["name"]: sample_value(t["type"], p) for p in t["params"]}
        first = "first"  # a name, and the other trigger forms in turn
        triggers = [{"at": "1s", "repeat": {"every": "5s", "count": 2}, "probability": 0.5, "exclusive": True},
                    {"at_step": 2}, {"arrivals": {"process": "poisson", "mtbf": "30s", "max_occurrences": 2}},
                    {"after": {"fault": first, "delay": "1s"}}]
        faults = [dict({"type": t["type"], "target": {form: TARGET_SAMPLES[form]}, "duration": "1s"},
                       **triggers[i % len(triggers)], **params) for i, form in enumerate(forms)]
        faults[0]["name"] = first
        workload = {"kind": "train", "model": {"layers": [8, 16, 4]}, "batch_size": 8, "steps": 5}
        out[f"probe-fault-{t['type']}"] = scenario(f"probe-fault-{t['type']}", {"nodes": 2, "mode": "namespaces"},
                                                  workload, faults=faults)
    return out


def scenario(name, cluster, workload, **rest):
    return dict({"schema_version": 1, "name": name, "cluster": cluster, "workload": workload}, **rest)


def probe_workloads():
    """One workload of each kind (llm twice: built-in replicas, outside endpoints), every key set."""
    collective = {"kind": "collective", "backend": "gloo", "collectives": ["allreduce", "allgather", "broadcast",
                  "reduce_scatter"], "algorithms": ["ring", "halving_doubling"],
                  "sizes": {"min": "1KiB", "max": "64KiB", "factor": 4}, "warmup_iters": 1, "iters": 2,
                  "duration": "5s", "check": True, "timeout": "10s"}
    train = {"kind": "train", "backend": "gloo", "device": "cpu", "model": {"layers": [16, 32, 32, 32, 8]},
             "batch_size": 64, "steps": 20, "optimizer": {"kind": "adamw", "lr": 0.001, "momentum": 0.9,
             "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}, "bucket_size": "64KiB",
             "algorithm": "tcp_ring", "threads": 1, "target_loss": 0.05,
             "checkpoint": {"every_steps": 5, "mode": "incremental", "full_every": 2, "async": True, "dir": "ckpt"},
             "recovery": {"mode": "restart", "max_restarts": 2, "min_nodes": 3, "hang_timeout": "30s"},
             "timeout": "10s", "sdc_check_every": 0,
             "parallel": {"tp": 2, "pp": 2, "dp": 2, "microbatches": 2, "schedule": "gpipe"}}
    serve = {"kind": "serve", "model_name": "mlp", "model": {"layers": [16, 32, 8]}, "dtype": "int8",
             "replicas": [0, 1], "port": 8100, "queue_limit": 100, "checkpoint_dir": "ckpt",
             "batching": {"max_batch_size": 16, "max_queue_delay": "2ms", "preferred_batch_sizes": [4, 8]},
             "load": {"node": 2, "scenario": "server", "qps": 50, "duration": "5s", "rows": 1, "connections": 4,
                      "timeout": "1s", "window": "1s"}}
    llm = {"kind": "llm", "model_name": "tiny", "engine": "transformer", "context": 1024, "engine_threads": 1,
           "model": {"layers": 2, "dim": 64, "heads": 4, "kv_heads": 2, "ffn": 128, "dtype": "fp32"},
           "scheduler": {"max_running": 8, "max_batched_tokens": 128, "kv_blocks": 256, "block_size": 16,
                         "max_waiting": 32},
           "synthetic": {"first_token": "100ms", "cadence": "10ms", "tokens": 16}, "replicas": [0, 1], "port": 8200,
           "load": {"node": 2, "api": "chat", "stream": True, "arrival": "poisson", "rate": 4, "concurrency": 2,
                    "duration": "5s", "input": {"distribution": "lognormal", "mean": 64, "stddev": 16, "max": 256},
                    "output": {"distribution": "uniform", "low": 8, "high": 32, "max": 64}, "ignore_eos": True,
                    "slo": {"ttft": "1s", "tpot": "50ms", "e2e": "5s"}, "timeout": "30s", "window": "1s",
                    "max_in_flight": 64, "find_peak": {"start_rate": 1, "target_attainment": 99, "precision": 0.1,
                                                       "trial": "2s", "max_trials": 4}}}
    llm_out = {"kind": "llm", "engine": "synthetic", "endpoints": ["http://10.0.0.5:8000", "http://h1:8001/"],
               "load": {"arrival": "concurrency", "concurrency": 4, "api": "completions", "stream": False,
                        "input": {"distribution": "uniform", "low": 8, "high": 32, "max": 64},
                        "output": {"distribution": "normal", "mean": 16, "stddev": 4, "max": 32},
                        "dataset": "prompts.jsonl"}}
    command = {"kind": "command", "argv": ["python3", "{scenario_dir}/x.py", "--rank", "{rank}"], "nodes": [0, 1],
               "env": {"RANK_COPY": "{rank}"}, "cwd": "{out}", "master_port": 29500,
               "recovery": {"mode": "restart", "max_restarts": 1, "min_nodes": 1, "hang_timeout": "60s"}}
    return {"collective": collective, "train": train, "serve": serve, "llm": llm, "llm_out": llm_out,
            "command": command}


def probe_parts():
    """The fault triggers, probes, checks and scrape targets of the probe scenarios."""
    triggers = [
        {"name": "m-at", "type": "marker", "at": "1s", "duration": "1s", "repeat": {"every": "5s", "count": 3},
         "probability": 0.5, "target": {"random": 1}},
        {"name": "m-step", "type": "marker", "at_step": 3, "duration": "1s", "exclusive": True,
         "target": {"percent": "50%"}},
        {"name": "m-poisson", "type": "marker", "at": "2s", "duration": "1s",
         "arrivals": {"process": "poisson", "mtbf": "30s", "max_occurrences": 5}},
        {"name": "m-weibull", "type": "marker", "duration": "1s",
         "arrivals": {"process": "weibull", "scale": "30s", "shape": 0.8, "max_occurrences": 5}},
        {"name": "m-after", "type": "marker", "after": {"fault": "m-at", "delay": "2s"}, "duration": "1s"},
        {"name": "m-chain", "type": "marker", "after": "m-step"}]
    probes = [
        {"name": "loss", "kind": "metric", "mode": "continuous", "interval": "1s", "metric": "train/loss",
         "labels": {"rank": 0, "model": "mlp"}, "stat": "last", "window": "5s", "min": 0, "max": 100},
        {"name": "ready", "kind": "http", "mode": "before", "interval": "2s", "timeout": "1s", "node": 0,
         "url": "http://{node.0.addr}:8000/health", "expect_status": [200, 204], "json_field": "/ready",
         "equals": "true"},
        {"name": "depth", "kind": "http", "mode": "during:stage-kill", "url": "http://{node.1.addr}:8000/stats",
         "json_field": "/queue", "min": 0, "max": 10},
        {"name": "ping", "kind": "command", "mode": "after", "interval": "1s", "timeout": "1s", "node": 1,
         "argv": ["ping", "-c1", "{node.1.addr}"]},
        {"name": "up", "kind": "prometheus", "mode": "continuous", "interval": "2s", "url": "http://127.0.0.1:9090",
         "query": "up", "min": 0, "max": 1, "node": 0, "timeout": "1s"}]
    hybrid_faults = [
        {"name": "stage-kill", "type": "node.kill", "target": {"pp_stage": [1]}, "at_step": 5, "restart_after": "2s"},
        {"name": "tp-pause", "type": "node.pause", "target": {"tp_group": [0]}, "duration": "1s",
         "after": {"fault": "stage-kill", "delay": "1s"}}]
    checks = [
        {"metric": "train/step_time", "labels": {"rank": 0, "phase": "x"}, "phase": "fault:stage-kill",
         "stat": "p99", "min": 0, "max": "10s", "tolerance": "10%"},
        {"metric": "train/throughput", "phase": "recovery:stage-kill", "min": 1, "tolerance": 10},
        {"metric": "node_load1", "phase": "baseline", "max": 100}]
    scrape = [{"url": "http://{node.0.addr}:9100/metrics", "every": "1s", "timeout": "500ms", "node": 0,
               "metrics": ["node_load1", "/node_cpu.*/"], "rename": {"node_load1": "node/load1"}}]
    return {"triggers": triggers, "probes": probes, "hybrid_faults": hybrid_faults, "checks": checks,
            "scrape": scrape}


def probe_scenarios():
    """Scenarios that reach every object and key the parser reads (with the fault ones)."""
    agent = {"command": "/usr/bin/chaosbench", "timeout": "10s", "port": 7000}
    host = {"name": "h0", "address": "10.0.0.11", "user": "root", "port": 22, "interfaces": ["eth0"]}
    hosts = [host, dict(host, name="h1", address="10.0.0.12")]
    ssh = {"config": "ssh_config", "identity": "id_ed25519", "options": ["StrictHostKeyChecking=no"]}
    slurm = {"partition": "debug", "time_limit": "30m", "options": ["--exclusive"], "interfaces": ["eth0"]}
    w, part = probe_workloads(), probe_parts()
    # Node indices up to 99: the agent modes take up to 256 nodes.
    far = {"faults": [{"type": "node.pause", "at": "1s", "target": {"nodes": [99]}},
                      {"type": "node.pause", "at": "1s", "target": {"random": 100}}],
           "scrape": [{"url": "http://{node.99.addr}:9100/metrics", "node": 99}]}
    out = {
        "train-hybrid": scenario(
            "probe-train-hybrid", {"nodes": 4, "ranks_per_node": 2, "mode": "namespaces",
                                   "link": {"rate": "1gbit", "delay": "1ms"}}, w["train"],
            description="every key of train, checks, scrape, probes, abort, mesh and sweep", seed=7,
            timeout="5m", faults=part["hybrid_faults"], checks=part["checks"], scrape=part["scrape"],
            sweep={"workload.steps": [20, 30]}, probes=part["probes"], abort={"when": ["loss", "up"], "for": "2s"},
            mesh={"enabled": True, "rate": 10, "window": "1s"}),
        "collective": scenario("", {"nodes": 2, "ranks_per_node": 2, "mode": "local"}, w["collective"],
                               faults=part["triggers"], mesh=False),
        "serve": scenario("", {"nodes": 3, "mode": "auto"}, w["serve"]),
        "llm": scenario("", {"nodes": 3}, w["llm"]),
        "llm-endpoints": scenario("", {"nodes": 1}, w["llm_out"]),
        "command": scenario("", {"nodes": 2, "ranks_per_node": 2}, w["command"]),
        "ssh": scenario("", {"mode": "ssh", "nodes": 2, "ranks_per_node": 1, "hosts": hosts, "ssh": ssh,
                             "agent": agent}, w["collective"]),
        "ssh-inventory": scenario("", {"mode": "ssh", "hosts": "inventory.json"}, w["collective"]),
        "slurm": scenario("", {"mode": "slurm", "nodes": 100, "agent": agent, "slurm": slurm},
                          {"kind": "command", "argv": ["true"], "nodes": [0, 99]}, **far),
        "local-agents": scenario("", {"mode": "local-agents", "nodes": 2, "agent": {"timeout": "5s"}},
                                 w["collective"]),
    }
    return {f"probe-{name}": dict(doc, name=f"probe-{name}") for name, doc in out.items()}


def write_corpus(root, registry, tmp):
    """Every scenarios/*.json and the probe scenarios (written into tmp): [(label, path)]."""
    files = [(p.relative_to(root).as_posix(), p)
             for p in sorted((root / "scenarios").glob("*.json")) if p.name != "schema.json"]
    inventory = [{"address": "10.0.0.21"}, {"name": "b", "address": "10.0.0.22", "port": 2222}]
    (tmp / "inventory.json").write_text(json.dumps(inventory))
    for name, doc in {**probe_scenarios(), **fault_scenarios(registry)}.items():
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1))
        files.append((path.name, path))
    return files


class Corpus:
    """What the corpus showed: per path pattern the key sets read, per object shape (pattern
    and keys) the keys given a value, and one instance per shape and key to try choices on."""

    def __init__(self):
        self.shapes, self.given, self.choices = {}, {}, {}

    def note(self, pattern, keys, value, source):
        """One object read: `keys` the parser's, `value` the instance, `source` (label, file,
        JSON path, applied sub-schemas) where it is."""
        shape = (pattern, frozenset(keys))
        self.shapes.setdefault(pattern, set()).add(shape[1])
        self.given.setdefault(shape, set()).update(value)
        for key, v in value.items():
            self.choices.setdefault((shape, key), (source, join_path(source[2], key), v))


def check_object(pattern, keys, applied, findings, where):
    """The parser's keys at one object against the schema's there, both ways."""
    listed, closed = listed_keys(applied), closed_by(applied)
    if not closed:
        findings.add(pattern, "", f"the schema lets any key through; the parser accepts only {sorted(keys)}", where)
    for key in keys:
        if not all(allows(s, key) for s in closed):
            findings.add(pattern, key, "accepted by the parser, missing from the schema", where)
        elif not typed(applied, key):
            findings.add(pattern, key, "accepted by the parser; the schema gives it no type (only true)", where)
    for key in sorted(listed - set(keys)):
        findings.add(pattern, key, "listed by the schema, refused by the parser", where)


def error_path(error):
    path = ""
    for part in error.absolute_path:
        path = join_path(path, part)
    return path


def check_corpus_file(binary, schema, validator, label, path, corpus, findings):
    """One corpus scenario: the parser accepts it, the schema too, and at each object the
    parser read the two agree on its keys."""
    code, out, err = run(binary, "validate", "--portable", "--accepted-keys", str(path))
    if code != 0:
        findings.add("", "", f"chaosbench validate refuses a corpus scenario (exit {code}): {first_lines(err)}", label)
        return
    objects = {o["path"]: o["keys"] for o in map(json.loads, out.splitlines())}
    doc = json.loads(path.read_text(encoding="utf-8"))
    for e in validator.iter_errors(doc):
        where = error_path(e)
        findings.add(pattern_of(where), "", f"the schema refuses what the parser accepts: {e.message}",
                     f"{label} {where}")
    for at, value, applied in schema.walk(doc):
        pattern = pattern_of(at)
        if at in objects:
            check_object(pattern, objects[at], applied, findings, f"{label} {at}")
            corpus.note(pattern, objects[at], value, (label, path, at, applied))
        elif isinstance(value, dict) and pattern != TARGET_PATTERN and listed_keys(applied):
            findings.add(pattern, "", "the parser reads this object as a map of any keys; the schema lists fixed "
                         f"keys {sorted(listed_keys(applied))}", label)


SITE = re.compile(r'ObjectReader\s+\w+\(\s*\w+\s*,\s*[^,]+?,\s*([^,]+?)\s*,\s*(\{[^}]*\}|\w+)\s*\)', re.S)


def site_patterns(file, expr, shapes, findings):
    if expr.startswith('"'):
        return [expr.strip('"')]
    member = re.fullmatch(r'\w+\.path_of\("(\w+)"\)', expr)
    if member:
        return [p for p in shapes if p.endswith("." + member.group(1))] or [f"*.{member.group(1)}"]
    if (file, expr) not in VARIABLE_PATHS:
        findings.add("", "", f"{file}: an ObjectReader at path `{expr}`: add the patterns it stands for to "
                     "VARIABLE_PATHS in tests/e2e/schema_walk.py")
    return VARIABLE_PATHS.get((file, expr), [])


def check_coverage(root, corpus, findings):
    """Every ObjectReader construction visited; every key of every shape given a value."""
    for src in sorted((root / "harness" / "scenario").glob("*.cc")):
        text = src.read_text(encoding="utf-8")
        sites = SITE.findall(text)
        if len(sites) != len(re.findall(r"ObjectReader\s+\w+\(", text)):
            findings.add("", "", f"{src.name}: an ObjectReader construction this test cannot read")
        for expr, keys_expr in sites:
            keys = frozenset(re.findall(r'"([^"]*)"', keys_expr)) if keys_expr.startswith("{") else None
            for pattern in site_patterns(src.name, expr, corpus.shapes, findings):
                shapes = corpus.shapes.get(pattern, set())
                if pattern in UNREACHABLE:
                    continue
                if not shapes:
                    findings.add(pattern, "", f"read by {src.name}, reached by no corpus scenario: add a probe "
                                 "scenario")
                elif keys is not None and keys not in shapes:
                    findings.add(pattern, "", f"read by {src.name} with keys {sorted(keys)}; no corpus scenario "
                                 "reaches that reading")
    for (pattern, keys), given in corpus.given.items():
        for key in sorted(keys - given):
            if f"{pattern} {key}" not in UNREACHABLE:
                findings.add(pattern, key, "no corpus scenario gives it a value, so its type goes unchecked: add it "
                             "to a probe scenario")


def parser_choices(stderr, strict):
    """The strings the parser names as the only ones it accepts, in its message about
    BOGUS; `strict`: only the forms that say so (not "expected A or B", which may be a form)."""
    forms = [rf'expected one of (.*), got "{BOGUS}"', rf'"{BOGUS}" is not one of (.*)$',
             rf'"{BOGUS}" \((?:one of )?("[^)]*)\)']
    if not strict:
        forms += [rf'expected (.*), got "{BOGUS}"']
    for line in stderr.splitlines():
        for form in forms:
            m = re.search(form, line)
            if m:
                return set(re.findall(r'"([^"]*)"', m.group(1)))
        m = re.search(r"\(known: ([^)]*)\)", line)
        if m and not strict:
            return set(m.group(1).split(", "))
    return None


def schema_range(applied):
    """The integers every schema in `applied` allows: (lowest, highest), None where unbounded."""
    lows = [s["minimum"] for s in applied if "minimum" in s] + [s["exclusiveMinimum"] + 1 for s in applied
                                                                if "exclusiveMinimum" in s]
    highs = [s["maximum"] for s in applied if "maximum" in s] + [s["exclusiveMaximum"] - 1 for s in applied
                                                                 if "exclusiveMaximum" in s]
    return (max(lows) if lows else None, min(highs) if highs else None)


def check_range(binary, label, path, key_path, pattern, key, sub, findings):
    """An integer key: the parser's range (from its message about a value out of any
    range) is the schema's; for a bound that depends on the cluster (DYNAMIC_RANGES) the
    schema's highest need only allow the parser's."""
    for probe in (10 ** 15, -(10 ** 15)):
        _, _, err = run(binary, "validate", "--portable", "--set", f"{key_path}={probe}", str(path))
        m = re.search(rf"{re.escape(key_path)}: expected an integer from (-?\d+) to (-?\d+), got", err)
        if m:
            break
    else:
        return
    unbounded = lambda bound: None if bound == 2 ** 63 - 1 else bound  # noqa: E731  (INT64_MAX)
    low, high = int(m.group(1)), unbounded(int(m.group(2)))
    lo, hi = schema_range(sub)
    hi = unbounded(hi)
    shown = lambda a, b: f"{'any' if a is None else a} to {'any' if b is None else b}"  # noqa: E731
    dynamic = key in DYNAMIC_RANGES and lo == low and (hi is None or (high is not None and hi >= high))
    if (lo, hi) != (low, high) and not dynamic:
        findings.add(pattern, key, f"the parser takes {shown(low, high)}"
                     f"{' here' if key in DYNAMIC_RANGES else ''}; the schema {shown(lo, hi)}", f"{label} {key_path}")


def check_values(binary, schema, corpus, findings):
    """Each string (or array of strings) key: the parser's choices are the schema's enum;
    each integer key: the parser's range is the schema's."""
    for ((pattern, _), key), ((label, path, _, applied), key_path, value) in sorted(corpus.choices.items(), key=str):
        is_list = isinstance(value, list) and value and all(isinstance(v, str) for v in value)
        sub = schema.child(applied, key, value)
        if isinstance(value, int) and not isinstance(value, bool):
            check_range(binary, label, path, key_path, pattern, key, sub, findings)
        if not (isinstance(value, str) or is_list):
            continue
        enum = enum_of(schema.item(sub, 0, value[0]) if is_list else sub)
        bogus = json.dumps([BOGUS]) if is_list else BOGUS
        _, _, err = run(binary, "validate", "--portable", "--set", f"{key_path}={bogus}", str(path))
        got = parser_choices(err, strict=enum is None)
        where = f"{label} {key_path}"
        if got is None:
            if enum is not None:
                findings.add(pattern, key, f"the schema's enum is {sorted(enum)}; the parser's message names no "
                             f"choices: {first_lines(err, 1)}", where)
        elif enum is None:
            findings.add(pattern, key, f"the parser accepts only {sorted(got)}; the schema takes any value", where)
        else:
            for v in sorted(got - enum):
                findings.add(pattern, key, f"the parser accepts \"{v}\"; the schema's enum lacks it", where)
            for v in sorted(enum - got):
                findings.add(pattern, key, f"the schema's enum has \"{v}\"; the parser refuses it", where)


def check_registry(schema, registry, findings):
    """Each fault type's parameter kinds and target forms in the schema are the registry's."""
    for t in registry:
        applied = schema.applicable(schema.defs["fault"], {"type": t["type"], "at": "1s"})
        pattern = f"faults[] ({t['type']})"
        for p in t["params"]:
            got = kinds_of(schema.child(applied, p["name"], sample_value(t["type"], p)))
            if got != {p["kind"]}:
                findings.add(pattern, p["name"], f"the registry's kind is {p['kind']}; the schema's {sorted(got)}")
        forms = set(t["targets"]) | (set(GROUP_FORMS) if {"nodes", "ranks"} & set(t["targets"]) else set())
        listed = listed_keys(schema.child(applied, "target", {}))
        at = f"{TARGET_PATTERN} ({t['type']})"
        for form in sorted(forms - listed):
            findings.add(at, form, "a target form the registry takes; the schema lacks it")
        for form in sorted(listed - forms):
            findings.add(at, form, "a target form the schema lists; the registry refuses it")


def object_def(schema, value):
    """The $defs entry a docs example object is one of, judged by its keys; None if none."""
    if not isinstance(value, dict) or not value:
        return None
    enum = lambda d, k: schema.defs[d]["properties"][k]["enum"]  # noqa: E731
    guesses = [("fault", value.get("type") in enum("fault", "type")),
               ("probe", value.get("kind") in enum("probe", "kind") and "name" in value),
               ("workload", value.get("kind") in enum("workload", "kind")), ("host", "address" in value),
               ("scrape_target", "url" in value and "kind" not in value),
               ("check", "metric" in value and "kind" not in value), ("cluster", True)]
    for name, fits in guesses:
        if fits and name in schema.defs:
            unknown = set(value) - listed_keys(schema.applicable(schema.defs[name], value))
            return name if len(unknown) * 3 <= len(value) else None  # mostly its keys: an example of it
    return None


def fragment_schema(schema, value):
    """(what it is, the schema it must meet) for a docs example; (None, None) if not ours."""
    top = schema.root["properties"]
    if isinstance(value, dict) and "schema_version" in value:
        return "scenario", schema.root
    if isinstance(value, dict) and value and set(value) <= set(top):
        return "scenario members", {"type": "object", "properties": {k: top[k] for k in value}}
    names = {object_def(schema, v) for v in (value if isinstance(value, list) else [value])}
    if len(names) != 1 or None in names:
        return None, None
    name = names.pop()
    if isinstance(value, list):
        return f"array of {name}", {"type": "array", "items": {"$ref": f"#/$defs/{name}"}}
    return name, {"$ref": f"#/$defs/{name}"}


def parse_fragment(text):
    for before, after in (("", ""), ("{", "}"), ("[", "]")):
        try:
            return json.loads(before + text + after)
        except ValueError:
            pass
    return None


def check_docs(binary, root, schema, findings, tmp):
    """The ```json examples of README.md and docs/*.md against the schema (and the parser)."""
    for doc in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"^```json\n(.*?)^```", text, re.S | re.M):
            label = f"{doc.relative_to(root).as_posix()}:{text.count(chr(10), 0, m.start()) + 1}"
            value = parse_fragment(m.group(1))
            what, sub = (None, None) if value is None else fragment_schema(schema, value)
            if what is None:
                print(f"info {label}: not scenario JSON" + (" (not JSON)" if value is None else ""))
                continue
            validator = jsonschema.Draft202012Validator(dict(sub, **{"$defs": schema.defs}))
            errors = [f"{error_path(e) or '(root)'}: {e.message}" for e in validator.iter_errors(value)]
            if what == "scenario" and not errors:
                (tmp / "example.json").write_text(m.group(1))
                code, _, err = run(binary, "validate", "--portable", str(tmp / "example.json"))
                errors += [] if code == 0 else [f"chaosbench validate exits {code}: {first_lines(err)}"]
            for e in errors:
                findings.add(label, "", f"the example ({what}) is wrong: {e}")
            print(f"{'ok  ' if not errors else 'FAIL'} {label} ({what})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the chaosbench executable")
    parser.add_argument("--root", required=True, help="the repository root")
    args = parser.parse_args()
    root, binary = pathlib.Path(args.root).resolve(), str(pathlib.Path(args.binary).resolve())

    doc = json.loads((root / "scenarios" / "schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    schema, validator = Schema(doc), jsonschema.Draft202012Validator(doc)
    code, out, err = run(binary, "faults", "--json")
    if code != 0:
        print(f"FAIL chaosbench faults --json exits {code}: {first_lines(err)}")
        return 1
    registry = json.loads(out)
    findings, corpus = Findings(), Corpus()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        files = write_corpus(root, registry, tmp)
        for label, path in files:
            check_corpus_file(binary, schema, validator, label, path, corpus, findings)
        for name in sorted(set(schema.defs) - schema.reached):
            findings.add(f"$defs/{name}", "", "no corpus value reaches it: a probe scenario must use it, or it is dead")
        check_coverage(root, corpus, findings)
        check_values(binary, schema, corpus, findings)
        check_registry(schema, registry, findings)
        check_docs(binary, root, schema, findings, tmp)
    print(f"corpus: {len(files)} scenarios, {sum(len(s) for s in corpus.shapes.values())} object shapes "
          f"at {len(corpus.shapes)} path patterns")
    findings.print()
    print(f"{len(findings.items)} disagreement(s) between scenarios/schema.json and the parser")
    return 1 if findings.items else 0


if __name__ == "__main__":
    sys.exit(main())
