#!/usr/bin/python3
"""tools/scale against measurements on a two-node "cluster" made of two
network namespaces joined by a veth pair (tests/netns/nodes.py),
its link shaped by a token bucket (tc tbf: this kernel has no netem, so
rates only, no added delay). For each setting: net_probe between the two
nodes (one rank on each) measures alpha and beta; the seed CNN benchmark runs
with one worker on each node (AllReduce through MPI over the veth, buckets of
--bucket-kib) with --timeline; the measured step is the mean step period of
rank 0's timeline, the prediction tools/scale's from a one-worker profile
trace and that probe. Needs root. Prints a Markdown table.

  tools/bench/scale_netns.py DRUN PROFILE_TRACE [--steps 40] \\
      [--settings 50mbit:4096,100mbit:4096,...]
(PROFILE_TRACE: drun --threads 1 --timeline p.json tools/bench/seed_cnn_bench.lua)"""
import argparse
import json
import os
import shutil
import statistics
import sys

from scale_check import ROOT as root, chief_step_period, predict  # noqa: E402

sys.path.insert(0, os.path.join(root, "tests/netns"))
from nodes import TwoNodes, sh  # noqa: E402  (namespaces, veth pair, launch agent)


def run(nodes, argv):
    rc, out, err, _ = nodes.run(1, argv, timeout=600)
    if rc != 0:
        sys.exit(f"failed ({rc}): {' '.join(argv[-6:])}\n{out[-2000:]}{err[-3000:]}")
    return out


def shape(nodes, rate):
    # A burst of 256 KB: at 50 Mbit/s the 1 MB bucket of TwoNodes.shape would
    # let most of one gradient bucket through unshaped.
    for n in (nodes.a, nodes.b):
        sh("ip", "netns", "exec", n.ns, "tc", "qdisc", "replace", "dev", n.dev, "root",
           "tbf", "rate", rate, "burst", "256kb", "latency", "400ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("drun")
    ap.add_argument("profile")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--keep", help="copy the probes and traces into this directory")
    ap.add_argument("--settings", default="50mbit:4096,100mbit:4096,200mbit:4096,1gbit:4096,"
                                          "50mbit:64,100mbit:64,200mbit:64,1gbit:64")
    a_ = ap.parse_args()
    drun = os.path.abspath(a_.drun)
    probe_exe = os.path.join(os.path.dirname(drun), "tools/bench/net_probe")
    rows = []
    with TwoNodes() as nodes:
        probes = {}
        for setting in a_.settings.split(","):
            rate, kib = setting.split(":")
            shape(nodes, rate)
            if rate not in probes:
                out = run(nodes, [probe_exe, "--iters", "5", "--max-mib", "4"])
                probes[rate] = os.path.join(nodes.tmp, f"probe-{rate}.json")
                with open(probes[rate], "w") as f:
                    f.write(out.strip().splitlines()[-1] + "\n")
            trace = os.path.join(nodes.tmp, f"trace-{rate}-{kib}.json")
            run(nodes, [drun, "-q", "--threads", "1", "--timeline", trace,
                        os.path.join(root, "tools/bench/seed_cnn_bench.lua"),
                        "--steps", str(a_.steps), "--warmup", "5", "--bucket-kib", kib])
            measured = chief_step_period(trace)
            if a_.keep:
                os.makedirs(a_.keep, exist_ok=True)
                shutil.copy(trace, a_.keep)
                shutil.copy(probes[rate], a_.keep)
            predicted = predict(a_.profile, probes[rate], 2, 1, "ring", int(kib) / 1024)
            with open(probes[rate]) as f:
                probe = json.load(f)
            with open(trace) as f:
                ex = [e["dur"] / 1000 for e in json.load(f)["traceEvents"]
                      if e.get("cat") == "exchange" and e["pid"] == 0]
            print(f"  probe points (bytes, ping-pong s, allreduce s): {probe['points']}\n"
                  f"  exchanges in the run: {len(ex)}, mean {statistics.fmean(ex):.1f} ms",
                  file=sys.stderr, flush=True)
            row = (rate, kib, probe["alpha_s"] * 1e6, probe["bandwidth_gbit_s"] * 1000, predicted,
                   measured, 100 * (predicted / measured - 1))
            rows.append(row)
            print("| {} | {} KiB | {:.0f} us, {:.0f} Mbit/s | {:.1f} | {:.1f} | {:+.0f} % |".format(*row),
                  flush=True)
    within = sum(abs(r[-1]) <= 15 for r in rows)
    print(f"{within} of {len(rows)} settings within 15 %")


if __name__ == "__main__":
    main()
