#!/usr/bin/env python3
"""Checks scenarios/schema.json against the example scenarios and the bad files.

Run by CTest as

    python3 tests/e2e/schema_check.py --binary PATH_TO_chaosbench --root REPO_ROOT

1. scenarios/schema.json is a valid JSON Schema (draft 2020-12).
2. Every scenarios/*.json (except schema.json) is valid under the schema, and
   `chaosbench validate FILE` exits 0.
3. Every tests/scenarios/bad/*.json (except expected.json) is rejected by the schema (or
   is not loadable JSON), and `chaosbench validate FILE` exits 2 with a diagnostic line
   `FILE:LINE:COL: PATH: message` whose location and path are those in expected.json
   and whose message contains the expected substring.

expected.json maps each bad file's name to {"line", "column", "path", "contains"}. The
path is the JSON path ("workload.iters", "faults[0].at"; "" for the document root,
printed as "(root)"). The location is, for an unknown key, the key's opening quote; for
a wrong value, its first character; for a missing required key, the opening brace of the
object that lacks it; for a syntax error, where the JSON parser stops. Lines and columns
are 1-based and count characters. For files that are valid JSON this script also checks
that the expected location is the key or the value at the expected path, and that every
schema error is at that path or above it (so a bad file fails for its intended reason).

--schema-only skips every step that runs the binary.
Needs only the Python standard library and jsonschema (python3-jsonschema).
"""

import argparse
import json
import pathlib
import subprocess
import sys

import jsonschema

VALIDATE_TIMEOUT_S = 20


def show_path(path):
    return path if path else "(root)"


def join_path(parent, key):
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def error_path(error):
    path = ""
    for part in error.absolute_path:
        path = join_path(path, part)
    return path


def is_at_or_above(outer, inner):
    """True when JSON path `outer` is `inner` or one of its ancestors."""
    if outer == "" or outer == inner:
        return True
    return inner.startswith(outer + ".") or inner.startswith(outer + "[")


def locate(text):
    """Maps each JSON path of valid JSON `text` to the character offsets of its key
    (objects' members only) and of its value."""
    keys, values = {}, {}
    whitespace = " \t\r\n"
    i = 0

    def skip():
        nonlocal i
        while i < len(text) and text[i] in whitespace:
            i += 1

    def value(path):
        nonlocal i
        skip()
        values[path] = i
        c = text[i]
        if c == "{":
            i += 1
            skip()
            if text[i] == "}":
                i += 1
                return
            while True:
                skip()
                key_offset = i
                key, i = json.decoder.scanstring(text, i + 1)
                child = join_path(path, key)
                keys[child] = key_offset
                skip()
                i += 1  # ':'
                value(child)
                skip()
                i += 1  # ',' or '}'
                if text[i - 1] == "}":
                    return
        elif c == "[":
            i += 1
            skip()
            if text[i] == "]":
                i += 1
                return
            index = 0
            while True:
                value(join_path(path, index))
                index += 1
                skip()
                i += 1  # ',' or ']'
                if text[i - 1] == "]":
                    return
        elif c == '"':
            _, i = json.decoder.scanstring(text, i + 1)
        else:
            while i < len(text) and text[i] not in whitespace + ",]}":
                i += 1

    value("")
    return keys, values


def line_column(text, offset):
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def run_validate(binary, root, rel):
    """Runs `chaosbench validate rel` in root; returns (exit code, stderr) or raises."""
    proc = subprocess.run([binary, "validate", rel], cwd=root, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=VALIDATE_TIMEOUT_S)
    return proc.returncode, proc.stderr.decode("utf-8", errors="replace")


def first_lines(text, n=3):
    lines = [line for line in text.splitlines() if line.strip()]
    shown = " | ".join(lines[:n])
    return shown if shown else "(nothing)"


def validate_expecting(binary, root, rel, expected_code):
    """Runs `chaosbench validate` on one file: (why it is wrong or None, its stderr)."""
    try:
        code, stderr = run_validate(binary, root, rel)
    except subprocess.TimeoutExpired:
        return f"chaosbench validate did not finish within {VALIDATE_TIMEOUT_S} s", ""
    if code != expected_code:
        return f"chaosbench validate exited {code}, expected {expected_code}: {first_lines(stderr)}", stderr
    return None, stderr


def check_good(validator, binary, root, rel):
    """Returns None when the example scenario passes, else why it fails."""
    path = root / rel
    try:
        instance = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as e:
        return f"not loadable JSON: {e}"
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"schema: {show_path(error_path(e))}: {e.message}{more}"
    if binary is None:
        return None
    why, _ = validate_expecting(binary, root, rel, 0)
    return why


def check_bad(validator, binary, root, rel, expected):
    """Returns None when the bad file is rejected as expected, else why not."""
    for field, kind in (("line", int), ("column", int), ("path", str), ("contains", str)):
        if not isinstance(expected.get(field), kind):
            return f"expected.json: entry lacks \"{field}\" ({kind.__name__})"
    line, column, path = expected["line"], expected["column"], expected["path"]
    text = (root / rel).read_text(encoding="utf-8")

    # The schema step: not loadable JSON counts as rejected.
    try:
        instance = json.loads(text)
    except (ValueError, RecursionError):
        instance = None
    if instance is not None:
        errors = list(validator.iter_errors(instance))
        if not errors:
            return "the schema accepts it"
        for e in errors:
            where = error_path(e)
            if not is_at_or_above(where, path):
                return (f"the schema rejects it elsewhere than {show_path(path)}: "
                        f"{show_path(where)}: {e.message}")
        # The expected location must be the key or the value at the expected path.
        try:
            keys, values = locate(text)
        except (RecursionError, IndexError, ValueError) as e:
            return f"cannot locate paths in it: {e}"
        if path not in values:
            return f"expected.json: path {show_path(path)} is not in the file"
        candidates = [line_column(text, values[path])]
        if path in keys:
            candidates.append(line_column(text, keys[path]))
        if (line, column) not in candidates:
            where = " or ".join(f"{l}:{c}" for l, c in candidates)
            return (f"expected.json: {line}:{column} is neither the key nor the value of "
                    f"{show_path(path)} (those are at {where})")

    if binary is None:
        return None
    why, stderr = validate_expecting(binary, root, rel, 2)
    if why:
        return why
    prefix = f"{rel}:{line}:{column}: {show_path(path)}: "
    matches = [l for l in stderr.splitlines() if l.startswith(prefix)]
    if not matches:
        return f"stderr has no line starting \"{prefix}\": {first_lines(stderr)}"
    if not any(expected["contains"] in l[len(prefix):] for l in matches):
        return (f"the message at {line}:{column} lacks \"{expected['contains']}\": "
                f"{first_lines(chr(10).join(matches))}")
    return None


def check_fault_types(schema, binary):
    """The schema lists exactly the fault types the registry has, so editors and
    `validate` never disagree on which types exist."""
    try:
        out = subprocess.run([binary, "faults", "--json"], capture_output=True, text=True, timeout=20)
        registry = sorted(t["type"] for t in json.loads(out.stdout))
    except (OSError, ValueError, subprocess.TimeoutExpired, KeyError, TypeError) as e:
        return f"cannot read the registry: {e}"
    in_schema = sorted(schema["$defs"]["fault"]["properties"]["type"]["enum"])
    if registry != in_schema:
        return f"registry {registry} but schema {in_schema}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="the chaosbench executable")
    parser.add_argument("--root", required=True, help="the repository root")
    parser.add_argument("--schema-only", action="store_true",
                        help="check only against the schema; do not run chaosbench")
    args = parser.parse_args()

    root = pathlib.Path(args.root).resolve()
    binary = None
    if not args.schema_only:
        if not args.binary:
            parser.error("--binary is required unless --schema-only is given")
        binary = str(pathlib.Path(args.binary).resolve())
        if not pathlib.Path(binary).is_file():
            parser.error(f"no such binary: {args.binary}")

    passed = failed = 0

    def report(name, why):
        nonlocal passed, failed
        if why is None:
            passed += 1
            print(f"ok   {name}")
        else:
            failed += 1
            print(f"FAIL {name}: {why}")
        sys.stdout.flush()

    schema_rel = "scenarios/schema.json"
    validator = None
    try:
        schema = json.loads((root / schema_rel).read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        report(f"{schema_rel} (draft 2020-12 schema)", None)
    except (OSError, ValueError) as e:
        report(schema_rel, f"not loadable JSON: {e}")
    except jsonschema.exceptions.SchemaError as e:
        report(schema_rel, f"not a valid draft 2020-12 schema: {e.message}")
    if validator is None:
        print(f"{passed} passed, {failed} failed")
        return 1

    if binary:
        report("fault types: schema enum = `chaosbench faults --json`", check_fault_types(schema, binary))

    good = sorted(p for p in (root / "scenarios").glob("*.json") if p.name != "schema.json")
    if not good:
        report("scenarios/*.json", "no example scenario to check")
    for p in good:
        rel = p.relative_to(root).as_posix()
        report(rel, check_good(validator, binary, root, rel))

    bad_dir = root / "tests" / "scenarios" / "bad"
    expected_rel = (bad_dir / "expected.json").relative_to(root).as_posix()
    try:
        expected = json.loads((bad_dir / "expected.json").read_text(encoding="utf-8"))
        if not isinstance(expected, dict):
            raise ValueError("expected an object of file name to expectation")
    except (OSError, ValueError) as e:
        report(expected_rel, f"cannot be read: {e}")
        expected = {}
    bad = sorted(p for p in bad_dir.glob("*.json") if p.name != "expected.json")
    if not bad:
        report("tests/scenarios/bad/*.json", "no bad file to check")
    for p in bad:
        rel = p.relative_to(root).as_posix()
        if p.name not in expected:
            report(rel, f"no entry in {expected_rel}")
        elif not isinstance(expected[p.name], dict):
            report(rel, f"its entry in {expected_rel} is not an object")
        else:
            report(rel, check_bad(validator, binary, root, rel, expected[p.name]))
    stale = sorted(set(expected) - {p.name for p in bad})
    if stale:
        report(expected_rel, "entries for missing files: " + ", ".join(stale))

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
