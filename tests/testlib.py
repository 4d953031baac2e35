"""What the Python tests of tests/AREA/ share. Standard library only: the
tests run under /usr/bin/python3 and some again under the venv's Python.

  check(ok, what, detail)    one named check: prints "ok   WHAT" or "FAIL WHAT"
                             (then DETAIL, indented, only when it fails),
                             counts it and returns whether it passed
  require(ok, what, detail)  a check the rest of a case depends on: raises
                             Stop when it fails
  summary()                  the last line, "N passed, N failed", and the exit
                             code: 0 only when checks ran and none failed
  run_cases(cases)           a test made of cases (functions that assert): a
                             line per case (ok, skip, FAIL with its traceback),
                             then the same summary line
  show(rc, out, err)         a command's exit code and output's end, for a
                             failed assertion's message
  run(cmd, timeout)          a command run to its end or its time limit, output
                             captured; a run past its limit is killed with its
                             descendants and reported, not raised
  scheduler_free_env(**extra)  this environment without a scheduler's, MPI's
                             or CUDA's variables (a job's allocation must not
                             leak into a test that records one), plus EXTRA
  background(cmd)            a command started in the background, for a with
                             block that kills what is left of it at its end
  need_venv(python)          whether build/venv's Python is there, saying how to
                             make it when not
  temp_dir(name)             a temporary directory that also goes when meson
                             stops the test (SIGTERM at its time limit)
  descendants(pid), name(pid), alive(pid), kill_tree(pid)
                             a job's processes, from /proc
  wait_for(predicate, limit) polls until the predicate holds or time is up

A test script imports it from the folder above its own:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
    from testlib import check, summary  # noqa: E402
"""
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

# A cross build runs drun under an emulator this much slower than native
# (tests/meson.build sets it): run()'s time limits stretch by as much.
TIME_SCALE = float(os.environ.get("DRUN_TEST_TIME_SCALE", "1"))


class Stop(Exception):
    """A required check failed: what follows in the case cannot be checked."""


class Skip(Exception):
    """A case that cannot run here (a data set not installed): reported, not failed."""


class Checks:
    """A tally of named checks. The module's check(), require() and summary()
    use one for the whole test."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def check(self, ok, what, detail=""):
        ok = bool(ok)
        print(("ok   " if ok else "FAIL ") + what + ("" if ok or not detail else f"\n      {detail}"),
              flush=True)
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)
        return ok

    def require(self, ok, what, detail=""):
        if not self.check(ok, what, detail):
            raise Stop(what)
        return True

    def summary(self, skipped=0):
        print(f"{self.passed} passed, {len(self.failures)} failed"
              + (f", {skipped} skipped" if skipped else ""), flush=True)
        return 0 if (self.passed or skipped) and not self.failures else 1


CHECKS = Checks()
check = CHECKS.check
require = CHECKS.require
summary = CHECKS.summary


def run_cases(cases, *, temp=None):
    """Runs each (name, function) of `cases` in order: a function passes when it
    returns (what it returns, if anything, is printed after its name), is
    skipped when it raises Skip, and fails on any other exception (its
    traceback is printed). With `temp`, each gets a fresh temp_dir(temp) as
    its argument. Returns summary()'s exit code; no case at all is a failure."""
    skipped = 0
    for name, fn in cases:
        start = time.monotonic()
        try:
            if temp is None:
                result = fn()
            else:
                with temp_dir(temp) as tmp:
                    result = fn(tmp)
        except Skip as e:
            skipped += 1
            print(f"skip    {name}: {e}", flush=True)
            continue
        except Exception:  # noqa: BLE001 - report every failure, then go on
            CHECKS.failures.append(name)
            print(f"FAIL    {name}\n{traceback.format_exc()}", flush=True)
            continue
        CHECKS.passed += 1
        took = f" ({time.monotonic() - start:.1f} s)"
        print(f"ok      {name}" + (f": {result}" if result is not None else "") + took, flush=True)
    return summary(skipped)


def show(rc, out, err):
    return "exit code %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (rc, out[-3000:], err[-3000:])


def _text(data):
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def kill_tree(pid, sig=signal.SIGKILL):
    """Sends `sig` to a process and every descendant (found first, so none is
    orphaned by the kill before it is seen)."""
    for p in descendants(pid) + [pid]:
        try:
            os.kill(p, sig)
        except OSError:
            pass


def run(cmd, timeout, input=None, **kwargs):
    """A CompletedProcess of `cmd` with stdout and stderr as text. Past
    `timeout` seconds (times TIME_SCALE) the command and its descendants (the
    ranks of drun -np N) are killed: the return code is then the kill's
    (negative) and stderr ends saying it timed out, so a test reports a hang
    as a failed check instead of dying of TimeoutExpired."""
    limit = timeout * TIME_SCALE
    with subprocess.Popen(cmd, stdin=subprocess.PIPE if input is not None else None,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **kwargs) as p:
        try:
            out, err = p.communicate(input, timeout=limit)
        except subprocess.TimeoutExpired:
            kill_tree(p.pid)
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # something that escaped the kill holds the pipes
                out, err = "", ""
            err = _text(err) + f"\n[testlib] timed out after {limit:g} s and killed"
            return subprocess.CompletedProcess(cmd, p.returncode, _text(out), err)
        except BaseException:  # SIGTERM's SystemExit, KeyboardInterrupt: leave nothing running
            kill_tree(p.pid)
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


@contextlib.contextmanager
def background(cmd, **kwargs):
    """subprocess.Popen(cmd, **kwargs) for the with block; at its end, however
    it ends, the command and its descendants are killed if still running."""
    p = subprocess.Popen(cmd, **kwargs)
    try:
        yield p
    finally:
        if p.poll() is None:
            kill_tree(p.pid)
            p.wait()


def scheduler_free_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "LSB_", "LS_", "PBS_", "OMPI_", "PMI", "CUDA_"))}
    env.update(extra)
    return env


def need_venv(python):
    """True when build/venv's Python exists; otherwise prints a FAIL line
    saying how to make it, and returns False."""
    if os.access(python, os.X_OK):
        return True
    print(f"FAIL no {python}: run tools/python_env (tools/bootstrap does) to create the venv",
          flush=True)
    CHECKS.failures.append(f"no {python}")
    return False


def _exit_on_sigterm():
    # meson stops a test past its time limit with SIGTERM to its process group
    # (SIGKILL half a second later): leave through the with blocks so that
    # temporary directories go too.
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def temp_dir(name):
    """tempfile.TemporaryDirectory(prefix="drun_NAME_"), removed also when
    meson stops the test."""
    _exit_on_sigterm()
    return tempfile.TemporaryDirectory(prefix=f"drun_{name}_")


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def descendants(pid):
    """Every process below `pid`, children before their own."""
    out = []
    for c in children(pid):
        out.append(c)
        out.extend(descendants(c))
    return out


def name(pid):
    """The process's command name (/proc/PID/comm), "" once it is gone."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def alive(pid):
    """Whether the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate, limit, every=0.05):
    """Polls `predicate` every `every` seconds until it holds (True) or
    `limit` seconds have passed (False)."""
    deadline = time.monotonic() + limit
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(every)
