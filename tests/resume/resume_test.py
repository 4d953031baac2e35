#!/usr/bin/python3
"""Checkpoints resume exactly: the seed CNN on 6,000 Fashion-MNIST
images (94 batches an epoch for one worker, 47 for each of two), 600 steps, a
checkpoint every 200 steps, so resumption lands mid-epoch.

  single     kill -9 once ckpt-200.h5 exists, rerun the same command: it says it
             resumes from 200 (or 400) and its ckpt-600.h5 equals, bit for bit,
             that of an uninterrupted run.
  allreduce  the same with 2 AllReduce workers: equal within 1e-6.
  ps_sync    the same with 1 parameter server + 2 workers, sync mode: within 1e-6.
  sigterm    SIGTERM mid-run: exit code 75, a checkpoint at the step reached,
             and the rerun continues from it.
  usr1_two_workers  SIGUSR1 to a 2-worker job: both stop at one step, exit 75.
  past_the_end_ps   a rerun asking for fewer steps than the checkpoint holds
             ends at once, its parameter server included.
  corrupt    the newest checkpoint (of 20 and 40 steps) truncated: the rerun
             warns, names it and resumes from the one before.
  disk_full  the disk fills while a checkpoint is written: the run stops
             non-zero naming the file, the previous checkpoint and the index
             are intact, and the rerun resumes from it.

Usage: resume_test.py DRUN COMPARE_CHECKPOINTS SOURCE_ROOT [CASE...]"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import background, run, run_cases, wait_for  # noqa: E402

DRUN, COMPARE, ROOT = sys.argv[1:4]
ONLY = sys.argv[4:]
SCRIPT = os.path.join(ROOT, "scripts/fashion_mnist.lua")
RUN_LIMIT = 300  # seconds for one training run


def command(model_dir, np=1, strategy="all_reduce", steps=600, every=200, extra=()):
    cmd = [DRUN, "-q"]
    if np > 1:
        cmd += ["-np", str(np)]
    return cmd + [SCRIPT, "--train-limit", "6000", "--epochs", "20", "--steps", str(steps),
                  "--save-checkpoints-steps", str(every), "--strategy", strategy,
                  "--model-dir", model_dir, *extra]


def appears(path, proc, limit=120):
    """Whether `path` exists before `proc` ends, within `limit` seconds."""
    wait_for(lambda: os.path.exists(path) or proc.poll() is not None, limit, every=0.005)
    return os.path.exists(path)


def compare(a, b, tolerance):
    p = run([COMPARE, a, b, str(tolerance)], 120)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def killed_and_resumed(tmp, np, strategy, tolerance):
    full, cut = os.path.join(tmp, "full"), os.path.join(tmp, "cut")
    p = run(command(full, np, strategy), RUN_LIMIT)
    assert p.returncode == 0, f"uninterrupted run failed: {p.stderr[-2000:]}"
    with background(command(cut, np, strategy), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True, start_new_session=True) as job:
        assert appears(os.path.join(cut, "ckpt-200.h5"), job), "no ckpt-200.h5 before the run ended"
        os.killpg(job.pid, signal.SIGKILL)  # the launcher, mpirun and every rank
        job.wait()
    assert not os.path.exists(os.path.join(cut, "ckpt-600.h5")), "the run finished before the kill"
    p = run(command(cut, np, strategy), RUN_LIMIT)
    assert p.returncode == 0, f"the rerun failed: {p.stderr[-2000:]}"
    m = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", p.stderr)
    assert m and m.group(1) in ("200", "400"), f"the rerun did not resume from 200 or 400: {p.stderr[-1500:]}"
    ok, text = compare(os.path.join(full, "ckpt-600.h5"), os.path.join(cut, "ckpt-600.h5"), tolerance)
    assert ok, f"resumed from {m.group(1)}: weights differ: {text}"
    return f"resumed from step {m.group(1)}; {text}"


def case_single(tmp):
    return killed_and_resumed(tmp, 1, "all_reduce", 0)


def case_allreduce(tmp):
    return killed_and_resumed(tmp, 2, "all_reduce", 1e-6)


def case_ps_sync(tmp):
    return killed_and_resumed(tmp, 2, "ps_sync", 1e-6)


def case_sigterm(tmp):
    d = os.path.join(tmp, "term")
    with background(command(d, steps=100000), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True) as job:
        assert appears(os.path.join(d, "ckpt-200.h5"), job), "no ckpt-200.h5"
        time.sleep(0.3)
        job.send_signal(signal.SIGTERM)
        _, err = job.communicate(timeout=60)
    assert job.returncode == 75, f"exit code {job.returncode}, expected 75: {err[-1500:]}"
    m = re.search(r"preempted at step (\d+)", err)
    assert m, f"no 'preempted at step' message: {err[-1500:]}"
    step = int(m.group(1))
    assert os.path.exists(os.path.join(d, f"ckpt-{step}.h5")), f"no checkpoint of step {step}"
    p = run(command(d, steps=step + 30), RUN_LIMIT)
    assert p.returncode == 0, p.stderr[-1500:]
    assert f"ckpt-{step}.h5" in p.stderr and "resuming" in p.stderr, p.stderr[-1500:]
    with open(os.path.join(d, "summary.json")) as f:
        assert f'"global_step": {step + 30}' in f.read(), "the rerun did not end at step + 30"
    return f"preempted at step {step} with exit code 75; resumed from it"


def case_usr1_two_workers(tmp):
    # mpirun forwards SIGUSR1 to every rank (Slurm's --signal=USR1 reaches them
    # directly); the workers agree on a step, checkpoint and all exit 75.
    d = os.path.join(tmp, "usr1")
    with background(command(d, np=2, steps=100000), stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True) as job:
        assert appears(os.path.join(d, "ckpt-200.h5"), job), "no ckpt-200.h5"
        job.send_signal(signal.SIGUSR1)  # the launcher has become mpirun
        _, err = job.communicate(timeout=60)
    assert job.returncode == 75, f"exit code {job.returncode}, expected 75: {err[-1500:]}"
    steps = re.findall(r"preempted at step (\d+)", err)
    assert len(steps) == 2 and steps[0] == steps[1], f"both workers at one step: {steps}"
    assert os.path.exists(os.path.join(d, f"ckpt-{steps[0]}.h5")), f"no checkpoint of step {steps[0]}"
    return f"both workers preempted at step {steps[0]}, exit code 75"


def case_past_the_end_ps(tmp):
    # Resumed at a step past what the rerun asks for: nothing to train, and
    # the parameter server must still be released (no hang at the end).
    d = os.path.join(tmp, "past")
    p = run(command(d, np=2, strategy="ps_sync", steps=220), RUN_LIMIT)
    assert p.returncode == 0, p.stderr[-1500:]
    p = run(command(d, np=2, strategy="ps_sync", steps=100), RUN_LIMIT)
    assert p.returncode == 0, f"the rerun failed: {p.stderr[-1500:]}"
    assert "is already at step 220 (training done)" in p.stderr, p.stderr[-1500:]
    return "resumed at step 220 with --steps 100: nothing to train, every rank exits 0"


def case_corrupt(tmp):
    # Short (checkpoints at 20 and 40 steps): the sanitizer build runs this
    # case too (tools/fuzz/ci), where 400 steps took three minutes.
    d = os.path.join(tmp, "corrupt")
    p = run(command(d, steps=40, every=20), RUN_LIMIT)
    assert p.returncode == 0, p.stderr[-1500:]
    newest = os.path.join(d, "ckpt-40.h5")
    size = os.path.getsize(newest)
    with open(newest, "r+b") as f:
        f.truncate(size // 2)
    p = run(command(d, steps=45, every=20), RUN_LIMIT)
    assert p.returncode == 0, p.stderr[-1500:]
    assert "warning" in p.stderr and newest in p.stderr, f"no warning naming {newest}: {p.stderr[-1500:]}"
    assert "resuming from" in p.stderr and "ckpt-20.h5" in p.stderr, p.stderr[-1500:]
    return "the truncated ckpt-40.h5 was named and skipped; resumed from ckpt-20.h5"


def case_disk_full(tmp):
    # The file system fills up while ckpt-400.h5 is written (RLIMIT_FSIZE: a
    # write past the limit fails with EFBIG, as on a full disk). The run stops
    # with a non-zero exit and one error line naming the file; ckpt-200.h5 and
    # the index naming it are untouched, no partial file is left, and a rerun
    # with space again resumes from ckpt-200.h5 (docs/formats.md).
    d = os.path.join(tmp, "full")
    p = run(command(d, steps=200), RUN_LIMIT)
    assert p.returncode == 0, p.stderr[-1500:]
    limit = os.path.getsize(os.path.join(d, "ckpt-200.h5")) // 2

    def fill_up():
        import resource
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    p = run(command(d, steps=400), RUN_LIMIT, preexec_fn=fill_up)
    newest = os.path.join(d, "ckpt-400.h5")
    errors = [l for l in p.stderr.splitlines() if newest in l]
    assert p.returncode != 0, f"the run went on past a failed checkpoint: {p.stderr[-1500:]}"
    assert len(errors) == 1 and "File too large" in errors[0], \
        f"no one line naming {newest} and the reason: {p.stderr[-1500:]}"
    left = sorted(os.listdir(d))
    assert "ckpt-200.h5" in left and not [f for f in left if f.startswith("ckpt-400")], \
        f"files after the failure: {left}"
    with open(os.path.join(d, "checkpoint")) as f:
        index = f.read()
    assert 'model_checkpoint_path: "ckpt-200.h5"' in index and "400" not in index, index
    p2 = run(command(d, steps=400), RUN_LIMIT)
    assert p2.returncode == 0, p2.stderr[-1500:]
    assert "resuming from" in p2.stderr and "ckpt-200.h5" in p2.stderr, p2.stderr[-1500:]
    assert os.path.exists(newest), "the rerun wrote no ckpt-400.h5"
    return (f"exit {p.returncode} with '{errors[0].strip()[:160]}'; ckpt-200.h5 and its index "
            "intact; the rerun resumed from it")


def main():
    cases = [(n[5:], f) for n, f in globals().items()
             if n.startswith("case_") and (not ONLY or n[5:] in ONLY)]
    return run_cases(cases, temp="resume")


if __name__ == "__main__":
    sys.exit(main())
