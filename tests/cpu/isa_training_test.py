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
import subprocess
import sys
import tempfile

BAR = 0.875
SPREAD = 0.01


def main():
    drun, root = sys.argv[1], sys.argv[2]
    version = subprocess.run([drun, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"cpu kernels: \S+ \(this CPU runs ([^;]+);", version)
    if not m:
        sys.exit("drun --version names no CPU kernel variants:\n" + version)
    variants = [v.strip() for v in m.group(1).split(",")]
    print(version.strip())
    script = os.path.join(root, "scripts/fashion_mnist.lua")
    results, failed = {}, 0
    with tempfile.TemporaryDirectory(prefix="drun_isa_") as tmp:
        for isa in variants:
            d = os.path.join(tmp, isa)
            p = subprocess.run([drun, "-q", "--threads", "2", script, "--epochs", "3",
                                "--model-dir", d],
                               capture_output=True, text=True, timeout=900,
                               env=dict(os.environ, DRUN_ISA=isa))
            summary = {}
            path = os.path.join(d, "summary.json")
            if p.returncode == 0 and os.path.exists(path):
                with open(path) as f:
                    summary = json.load(f)
            acc = summary.get("eval", {}).get("accuracy")
            used = summary.get("platform", {}).get("cpu_kernels")
            ok = acc is not None and acc >= BAR and used == isa
            failed += not ok
            results[isa] = acc
            print("%s  DRUN_ISA=%s: test accuracy %s, %s img/s, kernels %s" %
                  ("ok    " if ok else "FAILED", isa, acc,
                   summary.get("train", {}).get("images_per_sec"), used))
            if not ok:
                print(p.stdout[-2000:] + p.stderr[-2000:])
    checks = len(variants)
    accs = [a for a in results.values() if a is not None]
    if len(accs) > 1:
        checks += 1
        spread = max(accs) - min(accs)
        if spread > SPREAD:
            failed += 1
        print("%s  the variants' accuracies differ by %.4f (at most %.2f)" %
              ("ok    " if spread <= SPREAD else "FAILED", spread, SPREAD))
    print("%d passed, %d failed" % (checks - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
