"""What tools/bench/scale_local.py and tools/bench/scale_netns.py share: the
measured step of a run (the chief's mean step period in its drun --timeline
trace) and tools/scale's prediction of it."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def chief_step_period(path, skip=0.2):
    """Mean time in ms between the chief's step starts, the first `skip` of them left out."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    chief = next(p for p, n in names.items() if "chief" in n)
    s = sorted(e["ts"] for e in events
               if e.get("ph") == "X" and e["pid"] == chief and e.get("cat") == "step")
    s = s[int(len(s) * skip):]
    return (s[-1] - s[0]) / (len(s) - 1) / 1000


def predict(profile, probe, nodes, workers_per_node, strategy, bucket_mib, intra_probe=None,
            colocation=None):
    """tools/scale's step time in ms for one setting, from a profile trace, net_probe output
    and, where workers share a node, tools/scale --probe-colocation's output."""
    argv = [sys.executable, os.path.join(ROOT, "tools/scale"), profile, "--probe", probe,
            "--nodes", str(nodes), "--workers-per-node", str(workers_per_node),
            "--strategies", strategy, "--bucket-mib", str(bucket_mib), "--json"]
    if intra_probe:
        argv += ["--intra-probe", intra_probe]
    if colocation:
        argv += ["--colocation", colocation]
    p = subprocess.run(argv, capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    # drun's AllReduce overlaps backward; its synchronous servers are pushed
    # to once backward is done.
    return next(r for r in rows if r["overlap"] == (strategy == "ring"))["step_ms"]
