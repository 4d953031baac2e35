#!/usr/bin/python3
"""A streamed data.hdf5 resumes exactly (issue 19): h5py writes 20,480
examples in chunks of 1,024; a run of 500 steps (320 an epoch) with a
shuffle buffer of 3,000 checkpoints every 100; a second run stops at 250,
mid-epoch, and its rerun resumes there. The reader must rebuild the shuffle
buffer as it was at batch 250, so the two ckpt-500.h5 agree bit for bit.
Usage: stream_resume_test.py DRUN COMPARE_CHECKPOINTS VENV_PYTHON SOURCE_ROOT"""
import os
import re
import subprocess
import sys
import tempfile

DRUN, COMPARE, PY, ROOT = sys.argv[1:5]

MAKE = r"""
import h5py, numpy as np, sys
n = 20480
y = (np.arange(n) * 7919 % 10).astype(np.uint8)
x = np.zeros((n, 28, 28, 1), np.uint8)
x[np.arange(n), 2 * y.astype(int) + 3, :, 0] = 255
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("x", data=x, chunks=(1024, 28, 28, 1))
    f["y"] = y
"""


def main():
    if not os.access(PY, os.X_OK):
        print(f"FAIL: no {PY}: run tools/python_env (tools/bootstrap does) to create the venv")
        return 1
    with tempfile.TemporaryDirectory(prefix="drun_stream_resume_") as d:
        h5 = os.path.join(d, "small.h5")
        made = subprocess.run([PY, "-c", MAKE, h5], capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            print(f"FAIL: h5py writes the file: {made.stderr[-500:]}")
            return 1

        def train(name, steps):
            r = subprocess.run([DRUN, "-q", os.path.join(ROOT, "tests/stream/stream_train.lua"),
                                "--h5", h5, "--dir", os.path.join(d, name), "--stream", "true",
                                "--steps", str(steps), "--epochs", "3", "--ckpt", "100",
                                "--buffer", "3000"], capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                print(f"FAIL: training {name} to {steps}: {r.stderr[-1000:]}")
            return r

        if train("whole", 500).returncode or train("cut", 250).returncode:
            return 1
        rerun = train("cut", 500)
        if rerun.returncode:
            return 1
        m = re.search(r"resuming from \S+/ckpt-250\.h5 \(epoch 1, batch 250\)", rerun.stderr)
        print(("ok   " if m else "FAIL ") + f"the rerun resumes mid-epoch at 250 ({rerun.stderr.strip()[-300:]})")
        c = subprocess.run([COMPARE, os.path.join(d, "whole", "ckpt-500.h5"),
                            os.path.join(d, "cut", "ckpt-500.h5"), "0"], capture_output=True, text=True)
        same = c.returncode == 0
        print(("ok   " if same else "FAIL ") + f"ckpt-500.h5 equal bit for bit ({(c.stdout + c.stderr).strip()})")
        return 0 if m and same else 1


if __name__ == "__main__":
    sys.exit(main())
