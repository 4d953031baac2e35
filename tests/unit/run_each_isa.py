#!/usr/bin/python3
"""Runs a GoogleTest binary once per CPU kernel variant this machine can run
(DRUN_ISA=baseline, avx2, avx512: kernels/cpu/cpu_kernels.hpp), so that every
variant passes the same tests, not only the one the process would choose.
The variants are those test_kernels' CpuVariants test reports. Under an
emulator the process's own variant (the last, the best) is left out: the
plain kernels and nn suites run it already, and each run costs minutes there.
Usage: run_each_isa.py KERNELS_TEST_EXE TEST_EXE [gtest arguments...]
A cross build's DRUN_EXE_WRAPPER (a JSON list: qemu-user) runs the executables."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, summary  # noqa: E402

wrapper = json.loads(os.environ.get("DRUN_EXE_WRAPPER", "[]"))
kernels_exe, exe, args = wrapper + [sys.argv[1]], wrapper + [sys.argv[2]], sys.argv[3:]
env = {k: v for k, v in os.environ.items() if k != "DRUN_ISA"}
probe = subprocess.run(kernels_exe + ["--gtest_filter=CpuVariants.TheCpuGetsEveryVariantItCanRun"],
                       capture_output=True, text=True, env=env)
m = re.search(r"variants on this CPU \((.*)\): (.*)", probe.stdout)
if probe.returncode != 0 or not m:
    sys.exit("cannot list the CPU kernel variants:\n" + probe.stdout + probe.stderr)
cpu, variants = m.group(1), m.group(2).split()
print("CPU: %s; variants: %s" % (cpu, " ".join(variants)))
if wrapper and len(variants) > 1:
    print("under %s: %s runs in the plain suite" % (wrapper[0], variants[-1]))
    variants = variants[:-1]
    # So do the thread-count sweeps (how work splits over threads does not
    # depend on the variant; x86-64 runs them for each): half this run's time there.
    print("under %s: the tests over thread counts run in the plain suite" % wrapper[0])
    filters = [a for a in args if a.startswith("--gtest_filter=")]
    positive = filters[-1][len("--gtest_filter="):] if filters else "*"
    args = [a for a in args if not a.startswith("--gtest_filter=")]
    args.append("--gtest_filter=" + positive + (":" if "-" in positive else "-") + "*Thread*")
for isa in variants:
    run = subprocess.run(exe + args, capture_output=True, text=True, env=dict(env, DRUN_ISA=isa))
    tests = re.search(r"\[  PASSED  \] (\d+) test", run.stdout)
    check(run.returncode == 0 and tests and int(tests.group(1)) > 0,
          "DRUN_ISA=%s (%s tests)" % (isa, tests.group(1) if tests else "no"),
          run.stdout[-6000:] + run.stderr[-3000:])
sys.exit(summary())
