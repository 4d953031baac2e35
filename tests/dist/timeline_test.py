#!/usr/bin/python3
"""drun --timeline: the trace of a 2-worker AllReduce run (the
launcher's --timeline) and of a 1 ps + 2 worker synchronous parameter-server
run (RunConfig's timeline) follow the Trace Event Format that Perfetto and
chrome://tracing read, and show what they promise.

Every event is checked twice: by hand against the format's rules for the
phases drun writes (X: complete events, M: metadata), and by jsonschema (from
PyPI, in build/venv) against a JSON schema of the same rules where it is
installed. Perfetto's Python TraceProcessor would be the natural independent
reader, but it downloads its trace_processor_shell binary at run time, which
fails without network access; it is not used. Then: one process per rank
named with its role and host, a named thread for every track, events on one
track nest (no partial overlaps, which viewers draw wrongly), and on every
AllReduce worker some bucket's exchange overlaps a backward layer; the
parameter-server run has pushes, pulls and server applies.
Usage: timeline_test.py DRUN VENV_PYTHON SOURCE_ROOT"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

METADATA = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
            "thread_name": "name", "thread_sort_index": "sort_index"}

SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"oneOf": [
            {"type": "object", "required": ["name", "ph", "pid", "tid", "ts", "dur"],
             "properties": {"name": {"type": "string"}, "cat": {"type": "string"},
                            "ph": {"const": "X"}, "pid": {"type": "integer"},
                            "tid": {"type": "integer"}, "ts": {"type": "number", "minimum": 0},
                            "dur": {"type": "number", "minimum": 0},
                            "args": {"type": "object"}}},
            {"type": "object", "required": ["name", "ph", "pid", "tid", "args"],
             "properties": {"name": {"enum": list(METADATA)}, "ph": {"const": "M"},
                            "pid": {"type": "integer"}, "tid": {"type": "integer"},
                            "args": {"type": "object", "minProperties": 1}}},
        ]}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
    },
}


def check_by_hand(trace):
    """Problems with the Trace Event Format's required fields, per phase."""
    problems = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not a JSON object with a traceEvents array"]
    if trace.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        problems.append("displayTimeUnit must be ms or ns")
    for i, e in enumerate(trace["traceEvents"]):
        where = f"event {i} {json.dumps(e)[:120]}"
        if not isinstance(e, dict):
            problems.append(f"{where}: not an object")
            continue
        ph = e.get("ph")
        if not isinstance(e.get("name"), str) or not e["name"]:
            problems.append(f"{where}: name must be a non-empty string")
        for key in ("pid", "tid"):
            if not isinstance(e.get(key), int) or isinstance(e.get(key), bool):
                problems.append(f"{where}: {key} must be an integer")
        if ph == "X":
            for key in ("ts", "dur"):
                v = e.get(key)
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                    problems.append(f"{where}: {key} must be a number >= 0 (microseconds)")
            if "cat" in e and not isinstance(e["cat"], str):
                problems.append(f"{where}: cat must be a string")
            if "args" in e and not isinstance(e["args"], dict):
                problems.append(f"{where}: args must be an object")
        elif ph == "M":
            key = METADATA.get(e.get("name"))
            if key is None:
                problems.append(f"{where}: unknown metadata event")
            elif not isinstance(e.get("args"), dict) or key not in e["args"]:
                problems.append(f"{where}: metadata needs args.{key}")
        else:
            problems.append(f"{where}: phase {ph!r} is not one drun writes (X, M)")
    return problems


# Run by the venv's Python, which has jsonschema from PyPI: the schema on
# stdin's first line, the trace file as argument; prints one error a line.
VALIDATE = """
import json, sys
try:
    import jsonschema
except ImportError:
    print("NO-JSONSCHEMA")
    sys.exit(0)
schema = json.loads(sys.stdin.readline())
with open(sys.argv[1]) as f:
    trace = json.load(f)
for e in sorted(jsonschema.Draft202012Validator(schema).iter_errors(trace), key=str)[:10]:
    print(e.message[:200], "at", list(e.absolute_path))
"""


def check_by_jsonschema(python, path):
    p = run([python, "-c", VALIDATE, path], timeout=120, input=json.dumps(SCHEMA) + "\n")
    if p.returncode != 0:
        return [f"jsonschema check failed: {p.stderr[-1000:]}"]
    if p.stdout.strip() == "NO-JSONSCHEMA":
        # A venv made before jsonschema joined tools/python_env.
        print("  jsonschema is not in the venv (rerun tools/python_env): checked by hand only")
        return []
    errors = p.stdout.splitlines()
    print(f"  jsonschema: {len(errors)} errors")
    return [f"jsonschema: {e}" for e in errors]


def check_structure(trace, ranks, roles):
    """Processes, thread names, nesting."""
    problems = []
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    if sorted(names) != list(range(ranks)):
        problems.append(f"processes {sorted(names)}, expected ranks 0..{ranks - 1}")
    for pid, role in roles.items():
        if role not in names.get(pid, ""):
            problems.append(f"rank {pid} is named {names.get(pid)!r}, expected its role {role!r}")
    threads = {(e["pid"], e["tid"]) for e in events if e["name"] == "thread_name"}
    tracks = {}
    for e in events:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, on in sorted(tracks.items()):
        if key not in threads:
            problems.append(f"track {key} has events but no thread_name")
        # Complete events on one thread must nest: sorted by start (longer first), each one
        # either starts after the open ones end or lies inside the innermost.
        open_ends = []
        for e in sorted(on, key=lambda e: (e["ts"], -e["dur"])):
            start, end = e["ts"], e["ts"] + e["dur"]
            while open_ends and open_ends[-1] <= start + 1e-3:
                open_ends.pop()
            if open_ends and end > open_ends[-1] + 1e-3:
                problems.append(f"track {key}: {e['name']} at {start} overlaps an enclosing "
                                f"event without nesting in it")
                break
            open_ends.append(end)
    return problems


def overlaps(a, b):
    return a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]


def check_allreduce(trace):
    problems = []
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for rank in (0, 1):
        mine = [e for e in events if e["pid"] == rank]
        cats = {e.get("cat") for e in mine}
        for cat in ("forward", "backward", "exchange", "wait", "optimizer", "input", "step"):
            if cat not in cats:
                problems.append(f"rank {rank}: no {cat} event")
        exchanges = [e for e in mine if e.get("cat") == "exchange"]
        if any("bytes" not in e.get("args", {}) for e in exchanges):
            problems.append(f"rank {rank}: an exchange without args.bytes")
        backward = [e for e in mine if e.get("cat") == "backward"]
        hits = sum(1 for x in exchanges if any(overlaps(x, b) for b in backward))
        print(f"  rank {rank}: {hits} of {len(exchanges)} bucket exchanges overlap a backward layer")
        if hits == 0:
            problems.append(f"rank {rank}: no exchange overlaps backward")
    if not any(e.get("cat") == "checkpoint" for e in events):
        problems.append("no checkpoint event")
    if not any(e.get("cat") == "evaluate" for e in events):
        problems.append("no evaluate event")
    if not any(e.get("cat") == "input" and e["tid"] == 2 for e in events):
        problems.append("no event of the prefetch thread")
    return problems


def check_ps(trace):
    problems = []
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    server = {e["name"] for e in events if e["pid"] == 0}
    for name in ("receive push", "reply (pull)", "server apply (round)", "wait for requests"):
        if name not in server:
            problems.append(f"the server (rank 0) has no {name!r} event")
    for rank in (1, 2):
        pushes = [e for e in events if e["pid"] == rank and e["name"] == "push+pull"]
        if not pushes:
            problems.append(f"worker rank {rank}: no push+pull event")
        elif any(e["args"].get("bytes", 0) <= 0 for e in pushes):
            problems.append(f"worker rank {rank}: push+pull without bytes")
    return problems


def main():
    drun, python, root = sys.argv[1:4]
    if not need_venv(python):
        return summary()
    script = os.path.join(root, "tests/dist/timeline_cnn.lua")
    with temp_dir("timeline") as tmp:
        runs = [
            ("AllReduce, 2 workers, drun --timeline", os.path.join(tmp, "allreduce.json"),
             [drun, "-q", "-np", "2", "--timeline", os.path.join(tmp, "allreduce.json"), script,
              "--model-dir", os.path.join(tmp, "ar")],
             2, {0: "chief", 1: "worker 0"}, check_allreduce),
            ("synchronous parameter servers, 1 ps + 2 workers, RunConfig{timeline}",
             os.path.join(tmp, "ps.json"),
             [drun, "-q", "-np", "2", script, "--strategy", "ps_sync", "--trace",
              os.path.join(tmp, "ps.json"), "--model-dir", os.path.join(tmp, "ps")],
             3, {0: "ps 0", 1: "chief", 2: "worker 0"}, check_ps),
        ]
        for title, path, cmd, ranks, roles, specific in runs:
            print(title, flush=True)
            p = run(cmd, timeout=240)
            if not check(p.returncode == 0 and os.path.exists(path), f"{title}: drun exits 0 and writes "
                         f"the trace (exit {p.returncode})",
                         " ".join(cmd) + "\n" + p.stdout[-2000:] + p.stderr[-3000:]):
                continue
            with open(path) as f:
                trace = json.load(f)
            print(f"  {len(trace['traceEvents'])} events")
            problems = (check_by_hand(trace) + check_by_jsonschema(python, path) +
                        check_structure(trace, ranks, roles) + specific(trace))
            check(not problems, f"{title}: the trace follows the format and shows what it promises "
                  f"({len(problems)} problems)", "\n      ".join(problems[:20]))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
