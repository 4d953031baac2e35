#!/usr/bin/python3
"""What a new user meets first: drun's help and usage errors, the progress
lines of a tabular run, and the model directory of a run given no flags.

  help              drun --help lists the subcommands; drun inspect --help exits 0;
                    drun help lists the registries' names, drun help NAME one entry's options;
                    a script's --help shows descriptions, defaults, how to turn a flag off
  usage_errors      a bad option (drun's or the script's) is one line on stderr, exit 2;
                    an error in the script's own code keeps its traceback and exit 1
  progress_steps    a run bounded by steps alone: no fake epoch count, examples/s,
                    few step lines
  progress_epochs   at most 10 step lines an epoch
  throughput_two_workers  -np 2: examples/s of both workers, said so
  defaults          fashion_mnist.lua --model-dir D, no other flag: an end checkpoint,
                    train and eval events; the rerun says it is done and exits 0
  kill_and_resume   kill -9 mid-run, the same command resumes from the last checkpoint
  earlier_summary   starting afresh over another run's summary.json says so
  threads           --threads N and DRUN_THREADS=N give the script N threads alike: one
                    process, each rank of drun -np 2, each rank of mpirun -np 2 drun; without
                    either, the node's cores shared by its ranks; a bad DRUN_THREADS is named
  passed_to_ranks   drun -np 2 gives every rank its --data-dir (or DRUN_DATA_DIR) and --device
  preempted         SIGTERM: exit 75 and one line saying the step and how to resume, no traceback

Usage: cli_test.py DRUN SOURCE_ROOT [CASE...]"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import testlib  # noqa: E402
from testlib import Skip, background, run_cases, show, temp_dir, wait_for  # noqa: E402

DRUN = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
ONLY = sys.argv[3:]
HERE = os.path.join(ROOT, "tests", "cli")
TABULAR = os.path.join(HERE, "tabular.lua")
FASHION = os.path.join(ROOT, "scripts", "fashion_mnist.lua")
FASHION_DIR = "/usr/share/datasets/fashion-mnist"
ENV = dict(os.environ, DRUN_THREADS="2")


def run(args, cwd=None, timeout=120):
    p = testlib.run([DRUN] + args, timeout, cwd=cwd or ROOT, env=ENV)
    return p.returncode, p.stdout, p.stderr


def need_fashion_mnist():
    if not os.path.isfile(os.path.join(FASHION_DIR, "train-images-idx3-ubyte.gz")):
        raise Skip(FASHION_DIR + " not installed (apt install dataset-fashion-mnist)")


# ---- cases ----

def case_help():
    rc, out, err = run(["--help"])
    assert rc == 0, show(rc, out, err)
    assert re.search(r"^\s+inspect MODEL\.h5", out, re.M), "drun --help lists no inspect\n" + out
    assert re.search(r"^\s+help \[NAME\]", out, re.M), "drun --help lists no help\n" + out
    rc, out, err = run(["inspect", "--help"])
    assert rc == 0 and "usage: drun inspect MODEL.h5" in out, show(rc, out, err)
    rc, out, err = run(["help"])
    assert rc == 0 and re.search(r"^layers: Dense, Conv2D", out, re.M), show(rc, out, err)
    assert re.search(r"^strategies: AllReduce", out, re.M), show(rc, out, err)
    rc, out, err = run(["help", "Conv2D"])
    assert rc == 0 and re.search(r"^\s+kernel_size\s+integer or pair, required", out, re.M), \
        show(rc, out, err)
    rc, out, err = run(["help", "Conv3D"])
    assert rc == 2 and "nothing is called 'Conv3D'" in err, show(rc, out, err)
    rc, out, err = run([TABULAR, "--help"])
    assert rc == 0, show(rc, out, err)
    assert re.search(r"--step-ms N\s+milliseconds each step", out), "no description\n" + out
    assert "(default )" not in out and "(default: none)" in out, out
    assert "--scale=false turns it off" in out, out
    # The scripts users start with describe their options too.
    for script in ("scripts/fashion_mnist.lua", "scripts/iris_dnn_regressor.lua"):
        rc, out, err = run([script, "--help"])
        assert rc == 0 and re.search(r"--model-dir TEXT\s+checkpoints", out), show(rc, out, err)


def case_usage_errors():
    cases = [
        (["--bogus", TABULAR], "--bogus"),
        (["--threads", "many", TABULAR], "--threads"),
        (["-np", "0", TABULAR], "--np"),
        (["--min-workers", "2", TABULAR], "--min-workers 2 needs --max-restarts"),
        (["--max-restarts", "1", "--min-workers", "0", TABULAR], "--min-workers"),
        (["no_such_script.lua"], "no_such_script.lua"),
        (["inspect"], "usage: drun inspect"),
        ([TABULAR, "--stepz", "3"], "unknown option --stepz"),
        ([TABULAR, "--steps", "three"], "--steps needs a number"),
        ([TABULAR, "--scale=maybe"], "--scale"),
        ([TABULAR, "--steps"], "--steps needs a value"),
        ([TABULAR, "stray"], "unexpected argument"),
    ]
    for args, words in cases:
        rc, out, err = run(args)
        lines = [l for l in err.splitlines() if l.strip()]
        assert rc == 2, "%s: exit %d, expected 2\n%s" % (args, rc, show(rc, out, err))
        assert len(lines) == 1, "%s: %d lines on stderr, expected 1\n%s" % (args, len(lines), err)
        assert words in lines[0] and "traceback" not in err, "%s: %r\n%s" % (args, words, err)
    # The script's own fault is not a usage error: traceback and exit 1 as before.
    rc, out, err = run([os.path.join(ROOT, "tests", "lua", "runtime_error.lua")])
    assert rc == 1 and "stack traceback:" in err, show(rc, out, err)


def step_lines(out):
    return [l for l in out.splitlines() if re.search(r"\bstep \d+/\d+", l)]


def case_progress_steps():
    # 300 steps of about 10 ms over 32-step epochs: bounded by the steps alone.
    start = time.monotonic()
    rc, out, err = run([TABULAR, "--steps", "300", "--step-ms", "10"])
    took = time.monotonic() - start
    assert rc == 0, show(rc, out, err)
    assert "1000000000" not in out and not re.search(r"epoch \d+/", out), out
    assert "training to step 300" in out, out
    steps = step_lines(out)
    # Few: a line every 2 s at most (about 3 s of steps), however slowly a
    # loaded machine runs them.
    most = max(10, int(took / 2) + 1)
    assert 1 <= len(steps) <= most, "%d step lines (at most %d in %.1f s)\n%s" % (
        len(steps), most, took, out)
    assert all(re.search(r"step \d+/300 ", l) for l in steps), out
    assert "examples/s" in out and "img/s" not in out, out
    # Lines come at least ~2 s apart (one second of slack for the clock's rounding).
    stamps = [time.mktime(time.strptime(m, "%Y-%m-%d %H:%M:%S"))
              for m in re.findall(r"^\[([\d-]+ [\d:]+)\] (?:step|training)", out, re.M)]
    assert all(b - a >= 1 for a, b in zip(stamps, stamps[1:])), out
    # One number format: 4 decimals.
    assert not re.search(r"loss \d+\.\d{5,}", out), out


def case_progress_epochs():
    # 2 epochs of 256 steps of about 15 ms (~4 s each).
    rc, out, err = run([TABULAR, "--epochs", "2", "--batch-size", "1", "--step-ms", "15"])
    assert rc == 0, show(rc, out, err)
    assert "1000000000" not in out, out
    for epoch in (1, 2):
        lines = [l for l in step_lines(out) if "epoch %d/2 step" % epoch in l]
        assert 1 <= len(lines) <= 10, "epoch %d: %d step lines\n%s" % (epoch, len(lines), out)
    assert len(re.findall(r"epoch [12]/2 done", out)) == 2, out
    assert "examples/s" in out and "img/s" not in out, out


def case_throughput_two_workers():
    # Each worker's examples/s, summed, and labelled as such (summary.json's too).
    with temp_dir("cli") as tmp:
        rc, out, err = run(["-np", "2", TABULAR, "--steps", "40", "--step-ms", "0",
                            "--model-dir", tmp])
        assert rc == 0, show(rc, out, err)
        assert re.search(r"done in .* \d+ examples/s in all \(2 workers\)", out), out
        assert not re.search(r"examples/s(?! in all)", out), out


def events_in(directory):
    return glob.glob(os.path.join(directory, "events.out.tfevents.*"))


def case_defaults():
    need_fashion_mnist()
    with temp_dir("cli") as tmp:
        d = os.path.join(tmp, "run")
        # 100 steps of 64: one scalar summary at step 100, no checkpoint flag.
        args = [FASHION, "--train-limit", "6400", "--epochs", "1", "--model-dir", d]
        rc, out, err = run(args, timeout=300)
        assert rc == 0, show(rc, out, err)
        files = os.listdir(d)
        assert "ckpt-100.h5" in files and "checkpoint" in files, files
        train_events = events_in(d)
        assert train_events and events_in(os.path.join(d, "eval")), files
        with open(train_events[0], "rb") as f:
            assert b"loss" in f.read(), "no loss scalar in " + train_events[0]
        # The same command again: done already, says so in one line, shows the evaluation.
        rc, out, err = run(args, timeout=300)
        assert rc == 0, show(rc, out, err)
        done = [l for l in err.splitlines() if "already at step" in l]
        assert done == ["drun: model_dir %s is already at step 100 (training done); "
                        "nothing to do (more --epochs continue it, --model-dir DIR starts a "
                        "new run)" % d], err
        assert re.search(r"last evaluation: val_accuracy \d\.\d{4}", err), err
        assert "resuming" not in err and re.search(r"test accuracy \d\.\d{4}", out), out


def case_kill_and_resume():
    need_fashion_mnist()
    with temp_dir("cli") as tmp:
        d = os.path.join(tmp, "run")
        cmd = [DRUN, "-q", FASHION, "--train-limit", "6400", "--epochs", "3",
               "--save-checkpoints-steps", "20", "--model-dir", d]
        with background(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                        start_new_session=True) as job:
            wait_for(lambda: os.path.exists(os.path.join(d, "ckpt-40.h5")) or job.poll() is not None,
                     120, every=0.01)
            assert job.poll() is None, "the run ended before its checkpoint of step 40"
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
        assert not os.path.exists(os.path.join(d, "ckpt-300.h5")), "finished before the kill"
        p = testlib.run(cmd, 300, env=ENV)
        assert p.returncode == 0, show(p.returncode, p.stdout, p.stderr)
        m = re.search(r"resuming from \S+/ckpt-(\d+)\.h5", p.stderr)
        assert m and int(m.group(1)) >= 40, p.stderr
        assert os.path.exists(os.path.join(d, "ckpt-300.h5")), os.listdir(d)


def case_earlier_summary():
    # No checkpoints (0 turns them off): a second run starts afresh and says
    # it replaces the first one's summary.json. Tabular rows: no data set needed.
    with temp_dir("cli") as tmp:
        d = os.path.join(tmp, "run")
        script = os.path.join(tmp, "no_checkpoints.lua")
        with open(TABULAR) as f:
            text = f.read()
        text = text.replace("config = drun.RunConfig{", "config = drun.RunConfig{save_checkpoints_secs = 0, ")
        assert "save_checkpoints_secs = 0" in text, "tabular.lua's RunConfig moved"
        with open(script, "w") as f:
            f.write(text)
        args = [script, "--steps", "20", "--step-ms", "0", "--model-dir", d]
        rc, out, err = run(args)
        assert rc == 0 and "earlier run" not in err, show(rc, out, err)
        assert os.path.exists(os.path.join(d, "summary.json")), os.listdir(d)
        assert not glob.glob(os.path.join(d, "ckpt-*")), os.listdir(d)
        rc, out, err = run(args)
        assert rc == 0 and "holds an earlier run's summary.json" in err, show(rc, out, err)


CONTEXT_LUA = ("local c = require('drun').context()\n"
               "print(('threads=%d data_dir=%s device=%s role=%s')"
               ":format(c.threads, c.data_dir, c.device, c.role))\n")


def context_script(tmp):
    path = os.path.join(tmp, "context.lua")
    with open(path, "w") as f:
        f.write(CONTEXT_LUA)
    return path


def seen(out, key):
    """What each process printed for key, in the order of its lines."""
    return re.findall(r"\b%s=(\S*)" % key, out)


def run_env(cmd, threads, timeout=120):
    env = dict(os.environ)
    env.pop("DRUN_THREADS", None)
    if threads is not None:
        env["DRUN_THREADS"] = threads
    p = testlib.run(cmd, timeout, env=env, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def case_threads():
    cores = os.cpu_count()
    mpirun = shutil.which("mpirun")
    by_hand = [mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2"]
    with temp_dir("cli") as tmp:
        script = context_script(tmp)
        starts = [("one process", [DRUN], 1), ("drun -np 2", [DRUN, "-np", "2"], 2)]
        if mpirun:
            starts.append(("mpirun -np 2 drun", by_hand + [DRUN], 2))
        for name, start, ranks in starts:
            for how, extra, env in [("--threads 3", ["--threads", "3"], None),
                                    ("DRUN_THREADS=3", [], "3"),
                                    ("--threads 3 over DRUN_THREADS=5", ["--threads", "3"], "5"),
                                    ("neither", [], None)]:
                rc, out, err = run_env(start + extra + [script], env)
                assert rc == 0, "%s, %s: %s" % (name, how, show(rc, out, err))
                want = "3" if extra or env else str(max(1, cores // ranks))
                assert seen(out, "threads") == [want] * ranks, \
                    "%s, %s: threads %s, expected %s on each of %d\n%s" % (
                        name, how, seen(out, "threads"), want, ranks, out)
        rc, out, err = run_env([DRUN, script], "many")
        lines = [l for l in err.splitlines() if l.strip()]
        assert rc == 1 and len(lines) == 1 and "DRUN_THREADS" in lines[0] and "many" in lines[0], \
            show(rc, out, err)
    if not mpirun:
        raise Skip("no mpirun on PATH: one process and drun -np 2 only")


def case_passed_to_ranks():
    with temp_dir("cli") as tmp:
        script = context_script(tmp)
        rc, out, err = run(["-np", "2", "--data-dir", tmp, "--device", "cpu", "-q", script])
        assert rc == 0, show(rc, out, err)
        assert seen(out, "data_dir") == [tmp, tmp], out
        assert seen(out, "device") == ["cpu", "cpu"], out
        assert sorted(seen(out, "role")) == ["chief", "worker"], out
        env = dict(ENV, DRUN_DATA_DIR=tmp)
        p = testlib.run([DRUN, "-np", "2", script], 120, env=env, cwd=ROOT)
        assert p.returncode == 0 and seen(p.stdout, "data_dir") == [tmp, tmp], \
            show(p.returncode, p.stdout, p.stderr)


def case_preempted():
    with temp_dir("cli") as tmp:
        d = os.path.join(tmp, "run")
        out_path = os.path.join(tmp, "out")
        def training():
            with open(out_path) as f:
                return "training to step" in f.read()

        with open(out_path, "w") as out_file, \
                background([DRUN, TABULAR, "--steps", "1000000", "--step-ms", "1", "--model-dir", d],
                           stdout=out_file, stderr=subprocess.PIPE, text=True, env=ENV,
                           cwd=ROOT) as job:
            wait_for(lambda: job.poll() is not None or training(), 60)
            assert job.poll() is None, "the run ended before it trained"
            time.sleep(0.5)
            job.send_signal(signal.SIGTERM)
            _, err = job.communicate(timeout=60)
        lines = [l for l in err.splitlines() if l.strip()]
        assert job.returncode == 75, "exit %s, expected 75\n%s" % (job.returncode, err)
        assert len(lines) == 1 and "traceback" not in err, err
        m = re.fullmatch(r"drun: preempted at step (\d+); checkpoint written to (\S+), "
                         r"rerun the same command to resume", lines[0])
        assert m and m.group(2) == d, err
        assert os.path.exists(os.path.join(d, "ckpt-%s.h5" % m.group(1))), os.listdir(d)


def main():
    cases = [(n[5:], f) for n, f in globals().items() if n.startswith("case_")]
    if ONLY:
        cases = [(n, f) for n, f in cases if n in ONLY]
    return run_cases(cases)


if __name__ == "__main__":
    sys.exit(main())
