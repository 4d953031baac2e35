#!/usr/bin/python3
"""drun --max-restarts 1: a worker killed with SIGKILL mid-training
restarts the job, which resumes from the newest checkpoint and completes; the
launcher's log names the dead rank and the step it resumed from. A second
kill, with no restart left, ends the job non-zero saying so. (Without the
flag a kill ends the job within 15 s: fault_test.py, kill_a_worker.)
Usage: restart_test.py DRUN SOURCE_ROOT"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, descendants, name, summary, temp_dir, wait_for  # noqa: E402


def ranks_of(job, want, exclude=()):
    ranks = []

    def found():
        ranks[:] = [p for p in descendants(job.pid) if name(p) == "drun" and p not in exclude]
        return len(ranks) >= want or job.poll() is not None
    wait_for(found, 60, every=0.1)
    return ranks if len(ranks) >= want else []


class Job:
    """drun -np 2 --max-restarts 1 in the background, its stderr collected."""

    def __init__(self, drun, root, model_dir):
        self.cmd = [drun, "-q", "-np", "2", "--max-restarts", "1",
                    os.path.join(root, "scripts/fashion_mnist.lua"), "--train-limit", "6000",
                    "--epochs", "40", "--steps", "400", "--save-checkpoints-steps", "100",
                    "--model-dir", model_dir]
        self.model_dir = model_dir
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, start_new_session=True)
        self.err = []
        self.reader = threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True)
        self.reader.start()

    def text(self):
        return "".join(self.err)

    def has(self, ckpt_step, limit=120):
        return wait_for(lambda: os.path.exists(os.path.join(self.model_dir, f"ckpt-{ckpt_step}.h5")), limit)

    def kill_worker(self, exclude=()):
        """SIGKILL to the last rank (worker 0, rank 1); the ranks killed so far."""
        ranks = ranks_of(self.p, 2, exclude)
        if ranks:
            os.kill(ranks[-1], signal.SIGKILL)
        return ranks

    def restart_line(self):
        wait_for(lambda: "restarting the job" in self.text(), 30)
        return re.search(r"drun: rank 1 \(worker 0 on (\S+)\) died \((.*?)\); restarting the job "
                         r"\(restart 1 of 1\) from step (\d+)", self.text())

    def wait(self, limit):
        try:
            rc = self.p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            rc = "timeout"
        self.reader.join(timeout=10)
        return rc


def main():
    drun, root = sys.argv[1], sys.argv[2]
    with temp_dir("restart") as tmp:
        # One death: the job restarts and completes by itself.
        job = Job(drun, root, os.path.join(tmp, "once"))
        if not check(job.has(100), "2 ranks run and write ckpt-100"):
            job.wait(0)
            return 1
        job.kill_worker()
        killed = time.monotonic()
        m = job.restart_line()
        check(m, f"the launcher names the dead rank and the step it restarts from "
              f"after {time.monotonic() - killed:.1f} s: {m and m.group(0)}")
        rc = job.wait(300)
        r = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", job.text())
        try:
            with open(os.path.join(job.model_dir, "summary.json")) as f:
                s = json.load(f)
        except (OSError, ValueError):
            s = {}
        ok = check(rc == 0 and m and r and r.group(1) == m.group(3) and s.get("global_step") == 400
                   and s.get("workers") == 2,
                   f"the restarted job resumed from ckpt-{r and r.group(1)} and completed: exit {rc}, "
                   f"step {s.get('global_step')}, {s.get('workers')} workers")
        if not ok:
            print(job.text()[-3000:])

        # A second death with no restart left ends the job, saying so.
        job = Job(drun, root, os.path.join(tmp, "twice"))
        first = job.kill_worker() if job.has(100) else []
        m = job.restart_line()
        if m:
            job.has(int(m.group(3)) + 100)  # resumed and saved again
            job.kill_worker(exclude=first)
        rc = job.wait(60)
        check(m and rc != 0 and "no restarts left (--max-restarts 1)" in job.text(),
              f"a second death with no restart left ends the job (exit {rc}) and says so")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
