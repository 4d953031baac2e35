#!/usr/bin/python3
"""The LSF and PBS job templates (platforms/lsf/drun.lsf, platforms/pbs/drun.pbs)
run as their scheduler would run them, with a recorded allocation of this
machine (no LSF or PBS here):

  pbs   PBS_NODEFILE lists this host twice: 2 workers through mpirun; the
        SIGTERM PBS sends before killing a job becomes SIGUSR1 for drun, both
        workers checkpoint and the template exits 75; running it again
        resumes and finishes.
  lsf   LSB_MCPU_HOSTS "batch1 1 HOST 2" (the launch node skipped): 2 workers;
        the warning signal (-wa USR1) gives exit 75 with a checkpoint, which
        -Q "75" tells LSF to requeue.

Usage: templates_test.py DRUN SOURCE_ROOT"""
import json
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, scheduler_free_env, summary, temp_dir, wait_for  # noqa: E402

DRUN, ROOT = (os.path.abspath(a) for a in sys.argv[1:3])
SCRIPT = os.path.join(ROOT, "scripts/fashion_mnist.lua")


def clean_env(**extra):
    return scheduler_free_env(DRUN=DRUN, OMP_NUM_THREADS="1", **extra)


def args(model_dir, steps):
    return (f"-q {SCRIPT} --train-limit 6000 --epochs 40 --steps {steps} "
            f"--save-checkpoints-steps 100 --model-dir {model_dir}")


def interrupted_run(template, env, model_dir, sig, tmp):
    """Starts the template, sends `sig` to it once ckpt-100 exists; (rc, log)."""
    log_path = os.path.join(tmp, os.path.basename(template) + ".log")
    with open(log_path, "w") as log:
        p = subprocess.Popen(["bash", template], env=env, cwd=tmp, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: os.path.exists(os.path.join(model_dir, "ckpt-100.h5")) or p.poll() is not None,
                 120)
        if p.poll() is None:
            p.send_signal(sig)  # the scheduler signals the batch script only
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc = "timeout"
    with open(log_path, errors="replace") as f:
        return rc, f.read()


def expect_preempted(name, rc, log, model_dir):
    steps = re.findall(r"preempted at step (\d+)", log)
    ok = check(rc == 75 and len(steps) == 2 and len(set(steps)) == 1
               and os.path.exists(os.path.join(model_dir, f"ckpt-{steps[0]}.h5")),
               f"{name}: exit 75, both workers stopped at step {steps[:1]} with its checkpoint "
               f"(rc {rc})")
    if not ok:
        print(log[-3000:])


def case_pbs(tmp):
    model_dir = os.path.join(tmp, "pbs")
    nodefile = os.path.join(tmp, "nodefile")
    host = os.uname().nodename
    with open(nodefile, "w") as f:
        f.write(f"{host}\n{host}\n")
    template = os.path.join(ROOT, "platforms/pbs/drun.pbs")
    env = clean_env(PBS_NODEFILE=nodefile, PBS_JOBID="1.server", PBS_O_WORKDIR=tmp,
                    DRUN_ARGS=args(model_dir, 3000))
    rc, log = interrupted_run(template, env, model_dir, signal.SIGTERM, tmp)
    check("passed on to drun as SIGUSR1" in log, "pbs: SIGTERM reached the template, sent on as SIGUSR1")
    expect_preempted("pbs", rc, log, model_dir)
    env["DRUN_ARGS"] = args(model_dir, 300)
    r = run(["bash", template], timeout=300, env=env, cwd=tmp)
    try:
        with open(os.path.join(model_dir, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        s = {}
    check(r.returncode == 0 and "resuming from" in r.stdout + r.stderr and s.get("workers") == 2
          and s.get("global_step") == 300,
          f"pbs: the resubmitted job resumed and finished with 2 workers at step "
          f"{s.get('global_step')} (rc {r.returncode})")


def case_lsf(tmp):
    model_dir = os.path.join(tmp, "lsf")
    host = os.uname().nodename
    template = os.path.join(ROOT, "platforms/lsf/drun.lsf")
    env = clean_env(LSB_JOBID="7", LSB_MCPU_HOSTS=f"batch1 1 {host} 2", LS_SUBCWD=tmp,
                    DRUN_ARGS=args(model_dir, 3000))
    rc, log = interrupted_run(template, env, model_dir, signal.SIGUSR1, tmp)
    check("SIGUSR1, passed on to drun" in log and "LSF requeues on 75" in log,
          "lsf: the warning signal was passed on; the template says LSF requeues")
    expect_preempted("lsf", rc, log, model_dir)


def main():
    for name, f in [(n[5:], f) for n, f in globals().items() if n.startswith("case_")]:
        with temp_dir(name) as tmp:
            try:
                f(tmp)
            except (OSError, ValueError, subprocess.SubprocessError) as e:
                check(False, f"{name}: {e}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
