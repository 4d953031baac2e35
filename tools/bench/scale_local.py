#!/usr/bin/python3
"""tools/scale against measurements on this machine: one worker, two
AllReduce workers through MPI (not node-shared memory) and one synchronous
parameter server with two workers, all training the seed CNN
(tools/bench/seed_cnn_bench.lua). Each prediction comes from a different,
earlier run (the profile), a net_probe of two ranks here and, for the two
AllReduce workers, tools/scale's co-location probe (two one-worker copies at
once: how much two workers on these cores slow each other down); the
measured step is the mean step period of the chief's timeline. Each
setting's profile and co-location probe are taken just before its measured
run, in --rounds rounds whose medians are compared: a 2-vCPU host's speed can
change from one run to the next (docs/benchmarks.md, "Scaling model"), and a
profile from another phase would test the host, not the model. Prints a
Markdown table; tools/bench/scale_netns.py does the same across a shaped link.

  tools/bench/scale_local.py DRUN [--steps 200] [--rounds 3] [--keep DIR]"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from scale_check import ROOT, chief_step_period, predict  # noqa: E402

bench = os.path.join(ROOT, "tools/bench/seed_cnn_bench.lua")


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stdout[-2000:]}{p.stderr[-3000:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("drun")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3,
                    help="(profile, measured run) pairs a setting, their medians compared")
    ap.add_argument("--keep", help="copy the probe and traces into this directory")
    a = ap.parse_args()
    drun = os.path.abspath(a.drun)
    mpirun = shutil.which("mpirun") or "/usr/bin/mpirun"
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.json")
        out = run([mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2",
                   os.path.join(os.path.dirname(drun), "tools/bench/net_probe"),
                   "--iters", "20", "--max-mib", "4"])
        with open(probe, "w") as f:
            f.write(out.strip().splitlines()[-1] + "\n")

        def trace(name, launch, extra, steps):
            path = os.path.join(tmp, name + ".json")
            run([drun, "-q", "--threads", "1", *launch, "--timeline", path, bench,
                 "--steps", str(steps), "--warmup", "10", *extra])
            return path

        def colocation_probe(name):
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                f.write(run([sys.executable, os.path.join(ROOT, "tools/scale"), "--probe-colocation",
                             drun, bench, "--copies", "1,2", "--", "--steps",
                             str(max(60, a.steps // 3)), "--warmup", "10"]).strip().splitlines()[-1]
                        + "\n")
            return path

        # (setting, workers, tools/scale strategy, drun's launch options, the
        # run's script options, the profile's launch and script options,
        # bucket KiB). The AllReduce settings' profile is one worker alone,
        # stretched by the co-location probe; the servers' is a shorter run
        # of the same setting (the trace holds the servers' per-byte cost).
        mpi = ["--shared-memory=false"]
        ps = ["--strategy", "ps_sync"]
        settings = [
            ("1 worker", 1, "ring", [], [], ([], []), 4096),
            ("2 workers, AllReduce through MPI, 4 MiB buckets", 2, "ring", ["-np", "2"], mpi,
             ([], []), 4096),
            ("2 workers, AllReduce through MPI, 64 KiB buckets", 2, "ring", ["-np", "2"],
             mpi + ["--bucket-kib", "64"], ([], []), 64),
            ("1 ps + 2 workers, synchronous", 2, "ps", ["-np", "2"], ps, (["-np", "2"], ps), 4096),
        ]
        rows, ratios = [], []
        for i, (title, workers, strategy, launch, options, (p_launch, p_options), kib) in \
                enumerate(settings):
            predictions, measurements = [], []
            for r in range(a.rounds):
                colocation = colocation_probe(f"colocation-{i}-{r}") \
                    if workers > 1 and strategy == "ring" else None
                profile = trace(f"profile-{i}-{r}", p_launch, p_options, max(60, a.steps // 3))
                measurements.append(chief_step_period(trace(f"run-{i}-{r}", launch, options,
                                                            a.steps)))
                predictions.append(predict(profile, probe, 1, workers, strategy, kib / 1024,
                                           intra_probe=probe, colocation=colocation))
                if colocation:
                    with open(colocation) as f:
                        c = json.load(f)["copies"]
                    ratios.append(c["2"] / c["1"])
            predicted, measured = statistics.median(predictions), statistics.median(measurements)
            rows.append((title, predicted, measured, 100 * (predicted / measured - 1)))
            print("| {} | {:.2f} | {:.2f} | {:+.0f} % |".format(*rows[-1]), flush=True)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for name in os.listdir(tmp):
                shutil.copy(os.path.join(tmp, name), a.keep)
        with open(probe) as f:
            p = json.load(f)
        print(f"probe: alpha {p['alpha_s'] * 1e6:.2f} us, {p['bandwidth_gbit_s']:.1f} Gbit/s; "
              "two copies at once take " + ", ".join(f"{r:.3f}x" for r in ratios) + " one's step")
    within = sum(abs(r[-1]) <= 15 for r in rows)
    print(f"{within} of {len(rows)} settings within 15 %")


if __name__ == "__main__":
    main()
