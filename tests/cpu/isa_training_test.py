#!/usr/bin/python3
"""Training does not depend on the CPU kernel variant beyond float rounding:
the seed CNN (scripts/fashion_mnist.lua, 3 epochs, batch 64, SGD momentum 0.9)
reaches a test accuracy of at least 0.875 with every variant this CPU runs
(DRUN_ISA=baseline, avx2, avx512: kernels/cpu/cpu_kernels.hpp), and the
variants end within 0.01 of each other. summary.json names the variant used.
Usage: isa_training_test.py DRUN SOURCE_ROOT"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402

BAR = 0.875
SPREAD = 0.01


def main():
    drun, root = sys.argv[1], sys.argv[2]
    p = run([drun, "--version"], 60)
    m = re.search(r"cpu kernels: \S+ \(this CPU runs ([^;]+);", p.stdout)
    if not check(p.returncode == 0 and m, "drun --version names the CPU kernel variants",
                 p.stdout + p.stderr):
        return summary()
    variants = [v.strip() for v in m.group(1).split(",")]
    print(p.stdout.strip())
    script = os.path.join(root, "scripts/fashion_mnist.lua")
    results = {}
    with temp_dir("isa") as tmp:
        for isa in variants:
            d = os.path.join(tmp, isa)
            p = run([drun, "-q", "--threads", "2", script, "--epochs", "3", "--model-dir", d], 900,
                    env=dict(os.environ, DRUN_ISA=isa))
            result = {}
            path = os.path.join(d, "summary.json")
            if p.returncode == 0 and os.path.exists(path):
                with open(path) as f:
                    result = json.load(f)
            acc = result.get("eval", {}).get("accuracy")
            used = result.get("platform", {}).get("cpu_kernels")
            results[isa] = acc
            check(acc is not None and acc >= BAR and used == isa,
                  "DRUN_ISA=%s: test accuracy %s (at least %s), %s img/s, kernels %s" %
                  (isa, acc, BAR, result.get("train", {}).get("images_per_sec"), used),
                  p.stdout[-2000:] + p.stderr[-2000:])
    accs = [a for a in results.values() if a is not None]
    if len(accs) > 1:
        spread = max(accs) - min(accs)
        check(spread <= SPREAD, "the variants' accuracies differ by %.4f (at most %.2f)" % (spread, SPREAD))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
