#!/usr/bin/python3
"""drun through a real Slurm, on the two-node cluster of
tests/sched/cluster.py, submitting platforms/slurm/drun.sbatch as a user would.

  ps_srun        sbatch -N 2 -n 3 drun.sbatch --ps 1 ... --strategy ps_sync:
                 the seed CNN on a subset with 1 ps + 2 workers over both
                 nodes, started by srun --mpi=pmix; COMPLETED, summary.json
                 says 2 workers.
  mpirun         sbatch -N 2 -n 2, drun --launcher mpirun: AllReduce over both
                 nodes started by Open MPI's mpirun inside the allocation.
  restart_srun   drun --max-restarts 1 in the job, kill -9 of the rank on nodeb:
                 named (srun's line), restarted, resumed, COMPLETED.
  requeue        sbatch -N 2 -n 2 AllReduce, SIGUSR1 to the batch shell once
                 ckpt-50 of 200 steps exists (what --signal=B:USR1@120 does):
                 checkpoint, exit 75, the template requeues, the rerun resumes
                 and COMPLETES; its final checkpoint equals an uninterrupted
                 job's bit for bit.
  requeue_async  the same with ps_async and `scancel --signal=USR1 --full`:
                 requeued, resumed, COMPLETED.
  shrink         4 workers (2 a node), --max-restarts 1 --min-workers 2; once
                 epoch 2's first checkpoint exists nodeb is taken away (its
                 slurmd and ranks killed): within 60 s drun goes on with nodea's
                 2 workers, COMPLETES, summary.json names nodeb and 4 -> 2, test
                 accuracy within 0.01 of an uninterrupted 4-worker run's, and the
                 interrupted epoch's examples are each trained on once
                 (DRUN_EXAMPLE_LOG). Last: nodeb stays down.

After every case the queue must be empty; after all, no daemon, namespace or
directory of the cluster is left. Needs root and slurm-wlm + munge
(tools/bootstrap). Usage: slurm_test.py DRUN COMPARE_CHECKPOINTS SOURCE_ROOT [CASE...]"""
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from cluster import Interrupted, SlurmCluster  # noqa: E402
from testlib import check, summary, wait_for  # noqa: E402

DRUN, COMPARE, ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
ONLY = sys.argv[4:]
TEMPLATE = os.path.join(ROOT, "platforms/slurm/drun.sbatch")
SCRIPT = os.path.join(ROOT, "scripts/fashion_mnist.lua")
JOB_LIMIT = 240  # seconds for one job to end; meson's limit for the test is 600


def training(model_dir, steps, strategy="all_reduce", every=100):
    return [SCRIPT, "--train-limit", "6000", "--epochs", "40", "--steps", str(steps),
            "--save-checkpoints-steps", str(every), "--strategy", strategy, "--model-dir", model_dir]


def submit(c, work, name, sbatch_args, drun_args, env=None):
    out = os.path.join(work, f"{name}.out")
    r = c.run("sbatch", "--parsable", "--chdir", work, "--output", out, *sbatch_args, TEMPLATE,
              *drun_args, env=dict(c.env, DRUN=DRUN, OMP_NUM_THREADS="1", **(env or {})))
    return r.stdout.strip().split(";")[0], out


def text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def summary_of(model_dir):
    try:
        with open(os.path.join(model_dir, "summary.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def queue_empty(c):
    q = c.queue()
    return check(q == "", f"squeue is empty afterwards ({q or 'nothing'})")


def case_ps_srun(c, work):
    model_dir = os.path.join(work, "ps")
    before = c.veth_bytes(1)
    job, out = submit(c, work, "ps", ["-N", "2", "-n", "3"],
                      ["--ps", "1", *training(model_dir, 200, "ps_sync")])
    j = c.wait_job(job, limit=JOB_LIMIT)
    log = text(out)
    ok = check(j.get("JobState") == "COMPLETED" and j.get("ExitCode") == "0:0",
               f"job {job} COMPLETED, exit code 0:0 (got {j.get('JobState')} {j.get('ExitCode')})")
    if not ok:
        print(log[-3000:] + c.logs("slurmd"))
    s = summary_of(model_dir)
    check(s.get("workers") == 2 and s.get("global_step") == 200,
          f"summary.json: 2 workers, global step 200 ({s.get('workers')}, {s.get('global_step')})")
    m = re.search(r"drun: 3 ranks .* on nodea, nodea, nodeb .*srun --mpi=pmix", log)
    check(m, "drun started 1 ps + 2 workers on nodea, nodea, nodeb with srun --mpi=pmix")
    moved = c.veth_bytes(1) - before
    # 200 steps of two workers pushing and pulling 347k floats: far above Slurm's own messages.
    check(moved > 100e6, f"the ranks talked over the veth pair: {moved / 1e6:.0f} MB through nodeb")
    queue_empty(c)


def case_mpirun(c, work):
    model_dir = os.path.join(work, "mpirun")
    before = c.veth_bytes(1)
    job, out = submit(c, work, "mpirun", ["-N", "2", "-n", "2"],
                      ["--launcher", "mpirun", *training(model_dir, 100)])
    j = c.wait_job(job, limit=JOB_LIMIT)
    ok = check(j.get("JobState") == "COMPLETED",
               f"mpirun inside the allocation: job {job} COMPLETED ({j.get('JobState')} {j.get('ExitCode')})")
    if not ok:
        print(text(out)[-3000:])
    s = summary_of(model_dir)
    check(s.get("workers") == 2 and s.get("global_step") == 100,
          f"summary.json: 2 workers, global step 100 ({s.get('workers')}, {s.get('global_step')})")
    check(re.search(r"drun: 2 ranks .* on nodea, nodeb .*: mpirun ", text(out)),
          "drun started a worker on each node with mpirun")
    moved = c.veth_bytes(1) - before
    check(moved > 100e6, f"the ranks talked over the veth pair: {moved / 1e6:.0f} MB through nodeb")
    queue_empty(c)


def case_requeue(c, work):
    steps = 200
    full, cut = os.path.join(work, "full"), os.path.join(work, "cut")
    job, out = submit(c, work, "full", ["-N", "2", "-n", "2"], training(full, steps, every=50))
    j = c.wait_job(job, limit=JOB_LIMIT)
    if not check(j.get("JobState") == "COMPLETED", f"uninterrupted job {job} COMPLETED ({j.get('JobState')})"):
        print(text(out)[-3000:])
        return

    job, out = submit(c, work, "cut", ["-N", "2", "-n", "2"], training(cut, steps, every=50))
    wait_for(lambda: os.path.exists(os.path.join(cut, "ckpt-50.h5")), JOB_LIMIT)
    # What --signal=B:USR1@120 sends, now instead of 120 s before the limit.
    c.run("scancel", "--signal=USR1", "--batch", job)
    # Requeued: pending again, then running, then done.
    j = {}

    def ended():
        j.clear()
        j.update(c.job(job))
        return j.get("JobState") in ("COMPLETED", "FAILED", "CANCELLED")
    wait_for(ended, JOB_LIMIT, every=0.5)
    log = text(out)
    ok = check(j.get("JobState") == "COMPLETED" and j.get("Restarts") == "1",
               f"job {job} requeued once and COMPLETED (state {j.get('JobState')}, "
               f"restarts {j.get('Restarts')})")
    m = re.search(r"preempted at step (\d+)", log)
    r = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", log)
    check(m and r and m.group(1) == r.group(1) and "requeueing job" in log,
          f"checkpointed at step {m and m.group(1)}, exit 75, requeued by the template, "
          f"resumed from step {r and r.group(1)}")
    if not ok:
        print(log[-4000:])
    a, b = os.path.join(full, f"ckpt-{steps}.h5"), os.path.join(cut, f"ckpt-{steps}.h5")
    p = c.run(COMPARE, a, b, "0", check=False)
    check(p.returncode == 0, f"final weights equal the uninterrupted job's bit for bit "
          f"({(p.stdout + p.stderr).strip()})")
    queue_empty(c)


def case_requeue_async(c, work):
    # Asynchronous workers stop each at its own step; the rerun continues from
    # the chief's checkpoint. `--full` signals the ranks too, not only the
    # batch shell (which then must not die of SIGUSR1 either).
    model_dir = os.path.join(work, "async")
    job, out = submit(c, work, "async", ["-N", "2", "-n", "3"],
                      ["--ps", "1", *training(model_dir, 200, "ps_async", every=50)])
    wait_for(lambda: os.path.exists(os.path.join(model_dir, "ckpt-50.h5")), JOB_LIMIT)
    c.run("scancel", "--signal=USR1", "--full", job)
    j = c.wait_job(job, limit=JOB_LIMIT, states=("COMPLETED", "FAILED", "CANCELLED"))
    log = text(out)
    ok = check(j.get("JobState") == "COMPLETED" and j.get("Restarts") == "1",
               f"ps_async, scancel --signal=USR1 --full: job {job} requeued once and COMPLETED "
               f"(state {j.get('JobState')}, restarts {j.get('Restarts')})")
    r = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", log)
    s = summary_of(model_dir)
    check(r and s.get("global_step") == 200 and s.get("workers") == 2,
          f"resumed from step {r and r.group(1)} and finished at step {s.get('global_step')}")
    if not ok:
        print(log[-4000:])
    queue_empty(c)


def case_restart_srun(c, work):
    # drun --max-restarts 1 inside the job: the rank on nodeb killed with
    # SIGKILL; srun names it, drun restarts the step, which resumes.
    model_dir = os.path.join(work, "restart")
    job, out = submit(c, work, "restart", ["-N", "2", "-n", "2"],
                      ["--max-restarts", "1", *training(model_dir, 200, every=50)])
    wait_for(lambda: os.path.exists(os.path.join(model_dir, "ckpt-50.h5")), JOB_LIMIT)
    victims = c.node_processes(1, "drun")
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    j = c.wait_job(job, limit=JOB_LIMIT)
    log = text(out)
    m = re.search(r"drun: rank 1 \(worker 0 on nodeb\) died \((.*?)\); restarting the job "
                  r"\(restart 1 of 1\) from step (\d+)", log)
    r = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", log)
    ok = check(len(victims) == 1 and m and r and r.group(1) == m.group(2),
               f"kill -9 of the rank on nodeb: drun names it and restarts from step "
               f"{m and m.group(2)}; the rerun resumed from {r and r.group(1)}")
    s = summary_of(model_dir)
    ok = check(j.get("JobState") == "COMPLETED" and s.get("global_step") == 200,
               f"job {job} COMPLETED at step {s.get('global_step')} "
               f"({j.get('JobState')} {j.get('ExitCode')})") and ok
    if not ok:
        print(log[-4000:])
    queue_empty(c)


def examples_kept(log_dir, resumed_from):
    """(epoch, index) of every example the final model trained on, from the
    DRUN_EXAMPLE_LOG lines "step epoch index workers": the 4-worker run's up
    to the checkpoint the 2-worker rerun resumed from, and the rerun's."""
    kept = []
    for f in os.listdir(log_dir):
        for line in text(os.path.join(log_dir, f)).splitlines():
            step, epoch, index, workers = (int(x) for x in line.split())
            if workers == 2 or step <= resumed_from:
                kept.append((epoch, index))
    return kept


def case_shrink(c, work):
    # 4 workers (2 a node), 3 epochs of 32 steps over 4096 examples, a
    # checkpoint every 8 steps. Once step 40 (epoch 2's first checkpoint) is
    # saved, nodeb is taken away: --min-workers 2 goes on with nodea's 2.
    # Last of the cases: nodeb stays down.
    def training_of(model_dir):
        return [SCRIPT, "--train-limit", "4096", "--eval-limit", "2000", "--batch-size", "32",
                "--epochs", "3", "--save-checkpoints-steps", "8", "--save-summary-steps", "0",
                "--model-dir", model_dir]
    layout = ["-N", "2", "--ntasks-per-node=2", "--no-kill"]
    full, cut = os.path.join(work, "whole"), os.path.join(work, "shrunk")
    job, out = submit(c, work, "whole", layout, training_of(full))
    j = c.wait_job(job, limit=JOB_LIMIT)
    if not check(j.get("JobState") == "COMPLETED", f"uninterrupted 4-worker job {job} COMPLETED "
                 f"({j.get('JobState')})"):
        print(text(out)[-3000:])
        return
    examples = os.path.join(work, "examples")
    job, out = submit(c, work, "shrunk", layout,
                      ["--max-restarts", "1", "--min-workers", "2", *training_of(cut)],
                      env={"DRUN_EXAMPLE_LOG": examples})
    wait_for(lambda: os.path.exists(os.path.join(cut, "ckpt-40.h5")), JOB_LIMIT, every=0.1)
    c.take_away(1)
    lost = time.monotonic()
    went_on = wait_for(lambda: "resuming from" in text(out), 60, every=0.5)
    took = time.monotonic() - lost
    j = c.wait_job(job, limit=JOB_LIMIT)
    log = text(out)
    m = re.search(r"lost node nodeb at step (\d+): going on with 2 workers instead of 4 on nodea",
                  log)
    r = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", log)
    ok = check(went_on and m and r and m.group(1) == r.group(1),
               f"nodeb taken away at step 40 or later: drun names it and goes on with 2 workers on "
               f"nodea from step {m and m.group(1)} within 60 s ({took:.0f} s)")
    s = summary_of(cut)
    ok = check(j.get("JobState") == "COMPLETED" and s.get("workers") == 2,
               f"job {job} COMPLETED with 2 workers ({j.get('JobState')} {j.get('ExitCode')}, "
               f"{s.get('workers')})") and ok
    resized = s.get("resizes") or [{}]
    ok = check(resized[0].get("lost_node") == "nodeb" and resized[0].get("workers_before") == 4
               and resized[0].get("workers_after") == 2 and m
               and resized[0].get("step") == int(m.group(1)),
               f"summary.json's resizes name nodeb, the step, 4 -> 2 ({s.get('resizes')})") and ok
    a = summary_of(full).get("eval", {}).get("accuracy", 0)
    b = s.get("eval", {}).get("accuracy", 0)
    ok = check(abs(a - b) <= 0.01, f"test accuracy {b:.4f} within 0.01 of the uninterrupted "
               f"run's {a:.4f}") and ok
    if r:
        kept = examples_kept(examples, int(r.group(1)))
        epoch = [i for e, i in kept if e == 1]
        ok = check(len(epoch) == 4096 and len(set(epoch)) == 4096,
                   f"the interrupted epoch trained on each of its 4096 examples once "
                   f"({len(epoch)} kept, {len(set(epoch))} distinct)") and ok
    if not ok:
        print(log[-5000:])
    queue_empty(c)


def main():
    cases = [(n[5:], f) for n, f in globals().items() if n.startswith("case_")]
    cluster = SlurmCluster(visible=[ROOT, os.path.dirname(DRUN), os.path.dirname(COMPARE)])
    try:
        start = time.monotonic()
        with cluster as c:
            print(f"two-node Slurm up in {time.monotonic() - start:.1f} s "
                  f"({', '.join(n.name for n in c.nodes)})", flush=True)
            work = os.path.join(c.dir, "work")
            os.makedirs(work)
            for name, f in cases:
                if ONLY and name not in ONLY:
                    continue
                t = time.monotonic()
                print(f"--- {name}", flush=True)
                try:
                    f(c, work)
                except (RuntimeError, OSError) as e:
                    check(False, f"{name}: {e}")
                print(f"    ({time.monotonic() - t:.1f} s)", flush=True)
    except (RuntimeError, OSError) as e:
        check(False, f"the Slurm cluster: {e}")
    except (Interrupted, KeyboardInterrupt) as e:
        check(False, f"interrupted ({e or 'SIGINT'}) before the end")
    finally:
        left = cluster.leftovers()
        check(not left, f"nothing of the cluster is left (daemons, namespaces, files): {left}")
        rc = summary()
    return rc


if __name__ == "__main__":
    sys.exit(main())
