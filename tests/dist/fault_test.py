#!/usr/bin/python3
"""A worker killed with SIGKILL mid-training ends the whole job: every rank is
gone within 15 s (parameter servers included) and the launcher exits non-zero.
Usage: fault_test.py DRUN SOURCE_ROOT [STRATEGY RANKS], e.g. ps_async 3 for
1 parameter server and 2 workers; by default AllReduce on 2 ranks."""
import os
import signal
import subprocess
import sys
import tempfile
import time


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def descendants(pid):
    out = []
    for c in children(pid):
        out.append(c)
        out.extend(descendants(c))
    return out


def name(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def main():
    drun, root = sys.argv[1], sys.argv[2]
    strategy = sys.argv[3] if len(sys.argv) > 3 else "all_reduce"
    want = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    with tempfile.TemporaryDirectory() as tmp:
        job = subprocess.Popen(
            [drun, "-np", "2", os.path.join(root, "scripts/fashion_mnist.lua"), "--epochs", "20",
             "--strategy", strategy, "--model-dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        ranks = []
        while time.time() < deadline and len(ranks) < want:
            time.sleep(0.5)
            ranks = [p for p in descendants(job.pid) if name(p) == "drun"]
            if job.poll() is not None:
                print("the job ended before it could be killed:", job.stderr.read().decode())
                return 1
        if len(ranks) < want:
            print(f"did not find {want} ranks under the launcher")
            job.kill()
            return 1
        time.sleep(3)  # mid-training: past start-up and data loading
        victim = ranks[-1]  # the last rank is a worker: servers come first on a node
        os.kill(victim, signal.SIGKILL)
        killed_at = time.time()
        try:
            rc = job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            print("the job did not end within 30 s of the kill")
            for p in [job.pid] + descendants(job.pid):
                os.kill(p, signal.SIGKILL)
            return 1
        def alive(p):
            try:
                with open(f"/proc/{p}/stat") as f:
                    return f.read().split(")")[-1].split()[0] != "Z"
            except OSError:
                return False
        left = [p for p in ranks if alive(p)]
        while left and time.time() - killed_at < 15:
            time.sleep(0.1)
            left = [p for p in ranks if alive(p)]
        took = time.time() - killed_at
        print(f"killed rank pid {victim}; all ranks gone after {took:.1f} s, launcher exit code {rc}; "
              f"ranks left: {left}")
        ok = rc != 0 and took <= 15 and not left
        print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
