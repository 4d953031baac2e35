#!/usr/bin/python3
"""drun.data.hdf5 streaming a file larger than the memory it may use: h5py
writes an HDF5 file of more than 2 GB (28x28 uint8 images in chunks of 1,024,
each image a bar at its label's row), drun trains a small
network on a few hundred batches of it drawn from the whole file (shuffled
chunk order and a shuffle buffer), and summary.json's peak_rss_mib (VmHWM)
must stay under 600 MB -- reading the file into memory would take 2 GB. The
file is deleted whatever happens (also when the test is stopped).
Usage: stream_rss_test.py DRUN VENV_PYTHON SOURCE_ROOT"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, need_venv, run, summary, temp_dir  # noqa: E402

DRUN, PY, ROOT = sys.argv[1:4]
LIMIT_MIB = 600
STEPS = 300

MAKE = r"""
import h5py, numpy as np, sys
path, rows, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
images = np.zeros((10, 28, 28, 1), np.uint8)
for label in range(10):
    images[label, 2 * label + 3, :, 0] = 255
with h5py.File(path, "w") as f:
    x = f.create_dataset("x", (rows, 28, 28, 1), np.uint8, chunks=(chunk, 28, 28, 1))
    y = f.create_dataset("y", (rows,), np.uint8, chunks=(64 * chunk,))
    for begin in range(0, rows, 64 * chunk):
        labels = (np.arange(begin, min(rows, begin + 64 * chunk)) * 7919 % 10).astype(np.uint8)
        x[begin:begin + len(labels)] = images[labels]
        y[begin:begin + len(labels)] = labels
"""


def main():
    if not need_venv(PY):
        return summary()
    chunk = 1024
    rows = (2_100_000_000 // (28 * 28) // chunk + 1) * chunk  # > 2 GB of pixels
    with temp_dir("stream") as d:  # removed also when meson stops the test
        h5 = os.path.join(d, "big.h5")
        start = time.monotonic()
        made = run([PY, "-c", MAKE, h5, str(rows), str(chunk)], timeout=300)
        size = os.path.getsize(h5) if os.path.exists(h5) else 0
        if not check(made.returncode == 0 and size > 2e9,
                     f"h5py writes {size / 1e9:.2f} GB in {time.monotonic() - start:.0f} s "
                     f"({made.stderr[-300:]})"):
            return summary()
        model_dir = os.path.join(d, "run")
        start = time.monotonic()
        r = run([DRUN, "-q", os.path.join(ROOT, "tests/stream/stream_train.lua"),
                 "--h5", h5, "--dir", model_dir, "--steps", str(STEPS)], timeout=300)
        print(r.stdout.strip())
        check(r.returncode == 0, f"drun trains on it in {time.monotonic() - start:.0f} s "
              f"({r.stderr[-500:]})")
        try:
            with open(os.path.join(model_dir, "summary.json")) as f:
                result = json.load(f)
        except (OSError, ValueError) as e:
            result = {}
            check(False, f"summary.json is readable ({e})")
        check(result.get("global_step") == STEPS, f"{STEPS} steps ({result.get('global_step')})")
        peak = result.get("peak_rss_mib")
        check(isinstance(peak, (int, float)) and peak * 1.048576 < LIMIT_MIB,
              f"peak RSS {peak} MiB under {LIMIT_MIB} MB")
        # The batches hold the right pixels for their labels: a linear model
        # learns the bars (chance is 0.1).
        acc = float(r.stdout.split("accuracy")[-1]) if "accuracy" in r.stdout else 0.0
        check(acc > 0.9, f"the examples match their labels (training accuracy {acc})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
