#!/usr/bin/python3
"""A streamed data.hdf5 resumes exactly: h5py writes 20,480
examples in chunks of 1,024; a run of 500 steps (320 an epoch) with a
shuffle buffer of 3,000 checkpoints every 100; a second run stops at 250,
mid-epoch, and its rerun resumes there. The reader must rebuild the shuffle
buffer as it was at batch 250, so the two ckpt-500.h5 agree bit for bit.
Usage: stream_resume_test.py DRUN COMPARE_CHECKPOINTS VENV_PYTHON SOURCE_ROOT"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

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
    if not need_venv(PY):
        return summary()
    with temp_dir("stream_resume") as d:
        h5 = os.path.join(d, "small.h5")
        made = run([PY, "-c", MAKE, h5], timeout=120)
        if not check(made.returncode == 0, "h5py writes the file", made.stderr[-500:]):
            return summary()

        def train(name, steps):
            r = run([DRUN, "-q", os.path.join(ROOT, "tests/stream/stream_train.lua"),
                     "--h5", h5, "--dir", os.path.join(d, name), "--stream", "true",
                     "--steps", str(steps), "--epochs", "3", "--ckpt", "100",
                     "--buffer", "3000"], timeout=300)
            return check(r.returncode == 0, f"training {name} to step {steps} exits 0",
                         r.stderr[-1000:]), r

        if not (train("whole", 500)[0] and train("cut", 250)[0]):
            return summary()
        ok, rerun = train("cut", 500)
        if not ok:
            return summary()
        m = re.search(r"resuming from \S+/ckpt-250\.h5 \(epoch 1, batch 250\)", rerun.stderr)
        check(m, f"the rerun resumes mid-epoch at 250 ({rerun.stderr.strip()[-300:]})")
        c = run([COMPARE, os.path.join(d, "whole", "ckpt-500.h5"),
                 os.path.join(d, "cut", "ckpt-500.h5"), "0"], timeout=120)
        check(c.returncode == 0, f"ckpt-500.h5 equal bit for bit ({(c.stdout + c.stderr).strip()})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
