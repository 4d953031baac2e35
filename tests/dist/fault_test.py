#!/usr/bin/python3
"""A worker killed with SIGKILL mid-training ends the whole job: every rank is
gone within 15 s (parameter servers included) and the launcher exits non-zero.
Usage: fault_test.py DRUN SOURCE_ROOT [STRATEGY RANKS], e.g. ps_async 3 for
1 parameter server and 2 workers; by default AllReduce on 2 ranks."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import alive, check, descendants, kill_tree, name, summary, temp_dir  # noqa: E402

LIMIT = 15  # seconds from the kill until no rank is left


def main():
    drun, root = sys.argv[1], sys.argv[2]
    strategy = sys.argv[3] if len(sys.argv) > 3 else "all_reduce"
    want = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    with temp_dir("fault") as tmp:
        job = subprocess.Popen(
            [drun, "-np", "2", os.path.join(root, "scripts/fashion_mnist.lua"), "--epochs", "20",
             "--strategy", strategy, "--model-dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        ranks = []
        while time.monotonic() < deadline and len(ranks) < want and job.poll() is None:
            time.sleep(0.5)
            ranks = [p for p in descendants(job.pid) if name(p) == "drun"]
        if job.poll() is not None:
            check(False, "the job runs until a rank is killed", job.stderr.read().decode()[-3000:])
            return summary()
        if not check(len(ranks) >= want, f"{want} ranks run under the launcher ({len(ranks)})"):
            kill_tree(job.pid)
            return summary()
        time.sleep(3)  # mid-training: past start-up and data loading
        victim = ranks[-1]  # the last rank is a worker: servers come first on a node
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        try:
            rc = job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_tree(job.pid)
            rc = "none: still running 30 s after the kill"
        left = [p for p in ranks if alive(p)]
        while left and time.monotonic() - killed_at < LIMIT:
            time.sleep(0.1)
            left = [p for p in ranks if alive(p)]
        took = time.monotonic() - killed_at
        check(rc != 0 and isinstance(rc, int) and took <= LIMIT and not left,
              f"killed rank pid {victim}: all ranks gone after {took:.1f} s (at most {LIMIT}), "
              f"launcher exit code {rc} (non-zero); ranks left: {left}")
        for p in left:
            kill_tree(p)
        return summary()


if __name__ == "__main__":
    sys.exit(main())
