#!/usr/bin/python3
"""Gradient accumulation under -np 2: with gradient_accumulation_steps = 4,
the timeline of every worker shows one gradient exchange per 4 batches, for
AllReduce (its bucket's allreduce events) and for the synchronous parameter
servers (the workers' push+pull events), and the run ends as a whole number
of cycles trains it: summary.json's global step counts batches.
Usage: accumulation_test.py DRUN SOURCE_ROOT"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402

K = 4


def exchanges_per_worker(trace, workers, is_exchange):
    """{rank: (steps, exchanges)} of the worker ranks, from the complete events."""
    counts = {}
    for rank in workers:
        mine = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == rank]
        steps = sum(1 for e in mine if e.get("cat") == "step")
        counts[rank] = (steps, sum(1 for e in mine if is_exchange(e)))
    return counts


def main():
    drun, root = sys.argv[1:3]
    script = os.path.join(root, "tests/dist/accumulation.lua")
    runs = [("AllReduce", "all_reduce", [0, 1],
             lambda e: e.get("cat") == "exchange" and e["name"].startswith("allreduce bucket")),
            ("synchronous parameter servers", "ps_sync", [1, 2],
             lambda e: e.get("cat") == "exchange" and e["name"] == "push+pull")]
    with temp_dir("accumulation") as tmp:
        for title, strategy, workers, is_exchange in runs:
            trace_path = os.path.join(tmp, strategy + ".json")
            model_dir = os.path.join(tmp, strategy)
            p = run([drun, "-q", "-np", "2", script, "--strategy", strategy, "--trace", trace_path,
                     "--model-dir", model_dir], timeout=120)
            if not check(p.returncode == 0 and os.path.exists(trace_path),
                         f"{title}: drun -np 2 exits 0 and writes the trace (exit {p.returncode})",
                         p.stdout[-2000:] + p.stderr[-3000:]):
                continue
            with open(trace_path) as f:
                trace = json.load(f)
            counts = exchanges_per_worker(trace, workers, is_exchange)
            print(f"  {title}: (steps, exchanges) per worker rank {counts}")
            check(all(steps > 0 and steps % K == 0 and exchanges == steps // K
                      for steps, exchanges in counts.values()),
                  f"{title}: one exchange per {K} batches on every worker", str(counts))
            with open(os.path.join(model_dir, "summary.json")) as f:
                step = json.load(f).get("global_step")
            check(step == counts[workers[0]][0],
                  f"{title}: the global step counts batches ({step})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
