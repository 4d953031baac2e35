#!/usr/bin/python3
"""Gradient exchange across two nodes: drun's hierarchical AllReduce (sum
within each node through shared memory, then across nodes one slice per
worker) against the same strategy with one flat MPI_Iallreduce per bucket
over all workers, and one bare blocking MPI_Allreduce of the same bytes.

The two nodes are network namespaces joined by a veth pair
(tests/netns/nodes.py), 2 workers each; the link is shaped by a token bucket
(tc tbf) on both ends to each rate in --rates ("none": unshaped). Ranks are
placed by block (0-1 on node A, 2-3 on B: Slurm's and mpirun's default) and
cyclic (0, 2 on A; 1, 3 on B: mpirun --map-by node, srun -m cyclic). For
every repeat the settings are taken in rotated order and each runs

  mpirun (4 ranks, 2 per node) build/tools/bench/allreduce_bench --case all
         --bucket-mib B --iters I --iters-big J

which interleaves the variants per iteration (order rotated) and reports
per-case medians; the table gives the median over repeats. Raw JSON lines go
to build/bench/hierarchical.jsonl, the table to build/bench/hierarchical.md.
Needs root (network namespaces, tc).

  tools/bench/hierarchical.py [--rates "10gbit 1gbit"] [--placements "block cyclic"]
                              [--repeats 3] [--bucket-mib 4] [--iters 20] [--iters-big 5]"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "netns"))
from nodes import TwoNodes  # noqa: E402


def cpu_model():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rates", default="10gbit 1gbit")
    p.add_argument("--placements", default="block cyclic")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--bucket-mib", type=float, default=4)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--iters-big", type=int, default=5)
    a = p.parse_args()
    bench = os.environ.get("ALLREDUCE_BENCH", os.path.join(ROOT, "build/tools/bench/allreduce_bench"))
    if not os.access(bench, os.X_OK):
        sys.exit(f"error: {bench} not built (ninja -C build tools/bench/allreduce_bench)")
    rates = a.rates.split()
    settings = [(rate, pl) for rate in rates for pl in a.placements.split()]
    outdir = os.path.join(ROOT, "build", "bench")
    os.makedirs(outdir, exist_ok=True)
    rows = []
    with TwoNodes() as nodes:
        for r in range(a.repeats):
            for k in range(len(settings)):
                rate, placement = settings[(k + r) % len(settings)]
                nodes.shape(None if rate == "none" else rate)
                print(f"# repeat {r + 1}/{a.repeats}, link {rate}, {placement} placement",
                      file=sys.stderr, flush=True)
                argv = [bench, "--case", "all", "--bucket-mib", str(a.bucket_mib),
                        "--iters", str(a.iters), "--iters-big", str(a.iters_big)]
                # The two "nodes" share this machine's cores: without yielding,
                # ranks that poll for messages starve the ones (and the
                # kernel's TCP work) they wait for, and a 1 MB sum takes 100 ms.
                rc, out, err, took = nodes.run(2, argv, timeout=900, cyclic=placement == "cyclic",
                                               extra_env=("OMPI_MCA_mpi_yield_when_idle=1",))
                if rc != 0:
                    sys.exit(f"error: allreduce_bench across the nodes failed ({rc}):\n{err[-3000:]}")
                for line in out.splitlines():
                    if line.startswith("{"):
                        row = json.loads(line)
                        row.update(repeat=r, rate=rate, placement=placement)
                        rows.append(row)
    with open(os.path.join(outdir, "hierarchical.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")

    groups = {}
    for row in rows:
        groups.setdefault((row["rate"], row["placement"], row["case"]), []).append(row)
    med = lambda g, k: statistics.median(x[k] for x in g)
    order = {"seed_cnn": 0, "uniform_25m": 1, "resnet50_mix": 2}
    lines = [f"CPU: {cpu_model()} ({os.cpu_count()} cores); 2 nodes x 2 workers (network "
             f"namespaces, veth, tc tbf on both ends, mpi_yield_when_idle=1: the 4 ranks share "
             f"these cores), bucket {a.bucket_mib:g} MiB", "",
             "| link | placement | case | MiB | buckets | flat ms | hierarchical ms "
             "| hierarchical / flat | bare MPI_Allreduce ms |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (rate, placement, case), g in sorted(
            groups.items(), key=lambda kv: (settings.index(kv[0][:2]), order.get(kv[0][2], 9))):
        if not all(x["hierarchical"] for x in g):
            sys.exit(f"error: the strategy did not sum hierarchically ({case}, {rate})")
        lines.append(f"| {rate} | {placement} | {case} | {g[0]['mib']:.1f} | {g[0]['buckets']} | "
                     f"{med(g, 'flat_ms'):.2f} | {med(g, 'strategy_ms'):.2f} | "
                     f"{med(g, 'ratio_strategy_flat'):.2f} | {med(g, 'bare_ms'):.2f} |")
    lines += ["", f"{a.repeats} repeats; each cell the median over repeats of per-run medians "
              f"({a.iters} iterations for the seed CNN, {a.iters_big} for the others; ratios: "
              f"median of per-run ratios); {datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ}."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "hierarchical.md"), "w") as f:
        f.write(text)
    print(text, end="")
    print(f"# wrote {outdir}/hierarchical.md and hierarchical.jsonl", file=sys.stderr)


if __name__ == "__main__":
    main()
