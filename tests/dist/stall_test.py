#!/usr/bin/python3
"""The stall inspector, drun --stall-timeout 5 on 2 workers:

  sigstop      a worker stopped with SIGSTOP mid-training is named (rank,
               role, host, step, what it was doing, which exchange the other
               waits in) and the job ends non-zero with no rank left, within
               25 s: the 5 s timeout, the inspector's 1 s beat, and slack for
               a busy machine to end the job.
  evaluation   the chief evaluates for 15 s while the other worker waits for
               it (tests/dist/long_evaluation.lua): no stall is reported and
               the job completes. The worker's own heartbeat must show it
               waited longer than the timeout, so the case tests something.

Usage: stall_test.py DRUN SOURCE_ROOT"""
import glob
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import alive, check, descendants, name, summary, temp_dir, wait_for  # noqa: E402

STALL_TIMEOUT = 5
WITHIN = 25  # seconds from SIGSTOP to the job's end
EVALUATION = 3 * STALL_TIMEOUT  # seconds the chief evaluates while the other waits


def case_sigstop(drun, root, tmp):
    model_dir = os.path.join(tmp, "run")
    cmd = [drun, "-q", "-np", "2", "--stall-timeout", str(STALL_TIMEOUT),
           os.path.join(root, "scripts/fashion_mnist.lua"),
           "--train-limit", "6000", "--epochs", "400", "--save-checkpoints-steps", "100",
           "--model-dir", model_dir]
    job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    ranks = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and job.poll() is None:
            ranks = [p for p in descendants(job.pid) if name(p) == "drun"]
            if len(ranks) == 2 and os.path.exists(os.path.join(model_dir, "ckpt-100.h5")):
                break
            time.sleep(0.1)
        if not check(len(ranks) == 2 and job.poll() is None, "2 ranks train past ckpt-100"):
            return
        beats = glob.glob(os.path.join(model_dir, ".drun-stall", "*", "*"))
        os.kill(ranks[-1], signal.SIGSTOP)  # rank 1, worker 0
        stopped = time.monotonic()
        try:
            _, err = job.communicate(timeout=WITHIN + 30)
        except subprocess.TimeoutExpired:
            err = ""
        took = time.monotonic() - stopped
        rc = job.poll()
        m = re.search(r"drun: stall: rank 1 \(worker 0\) on host (\S+) has not been heard from for "
                      r"\d+ s \(last seen at step (\d+), (computing|waiting in \S+)\); rank 0 has "
                      r"waited in (\S+)", err)
        ok = check(m and m.group(1) == socket.gethostname() and rc not in (None, 0) and took <= WITHIN,
                   f"the stopped rank is named with its host, step and state, and the job ends "
                   f"non-zero (exit {rc}) {took:.1f} s after SIGSTOP (at most {WITHIN}): "
                   f"{m and m.group(0)}")
        if not ok:
            print(err[-3000:])
        wait_for(lambda: not any(alive(p) for p in ranks), 10, every=0.1)
        left = [p for p in ranks if alive(p)]
        check(not left, f"no rank is left ({left})")
        left = glob.glob(os.path.join(model_dir, ".drun-stall", "*", "*"))
        check(beats and not left, f"no heartbeat file is left ({left}; {len(beats)} while it ran)")
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
        for p in ranks:
            if alive(p):
                os.kill(p, signal.SIGKILL)


def case_evaluation(drun, root, tmp):
    env = dict(os.environ, TMPDIR=tmp)  # where the heartbeats go without a model_dir
    cmd = [drun, "-q", "-np", "2", "--stall-timeout", str(STALL_TIMEOUT),
           os.path.join(root, "tests/dist/long_evaluation.lua"), "--seconds", str(EVALUATION)]
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           start_new_session=True)
    longest = [0.0]

    def watch():  # the worker's longest wait, from its own heartbeat
        while job.poll() is None:
            for path in glob.glob(os.path.join(tmp, ".drun-stall", "*", "rank-1.json")):
                try:
                    with open(path) as f:
                        h = json.load(f)
                    if h["waiting"]:
                        longest[0] = max(longest[0], h["time"] - h["waiting_since"])
                except (OSError, ValueError, KeyError):
                    pass
            time.sleep(0.5)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = job.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        out, err = job.communicate()
    watcher.join(timeout=5)
    evaluated = " ".join(re.findall(r"evaluated for \d+ s", out))
    ok = check(job.returncode == 0 and "done" in out and "stall" not in err,
               f"a {EVALUATION} s evaluation raises no stall and the job completes "
               f"(exit {job.returncode}; {evaluated})")
    if not ok:
        print(err[-3000:])
    check(longest[0] > STALL_TIMEOUT, f"meanwhile the other worker waited {longest[0]:.0f} s, longer "
          f"than the {STALL_TIMEOUT} s timeout")


def main():
    drun, root = sys.argv[1], sys.argv[2]
    for case in (case_sigstop, case_evaluation):
        with temp_dir("stall") as tmp:
            case(drun, root, tmp)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
