#!/usr/bin/python3
"""The README's "Using it" block, run command by command in order in an
empty folder (as on a fresh clone, CPU only), each with small limits added
after its own options (fewer training examples, steps or epochs; a few
hundred generated CIFAR-10 records for DIR): every command exits 0, and none
prints "nothing to do" (no command of the block asks for nothing new).
A command the block adds, changes or drops is tested as it is.
Usage: readme_test.py DRUN SOURCE_ROOT"""
import os
import random
import re
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, scheduler_free_env, summary, temp_dir  # noqa: E402

# Limits by script, added after the command's own options (a script's last
# value of an option wins, so the README's own --epochs etc. are kept where
# they come later: they do not here, as none of these is in the block).
LIMITS = {
    "fashion_mnist.lua": ["--train-limit", "1280", "--eval-limit", "500"],
    "strategies/easgd.lua": ["--train-limit", "1280", "--eval-limit", "500"],
    "iris_mlp.lua": ["--epochs", "5"],
    "iris_dnn_regressor.lua": ["--steps", "20"],
    "cifar10_resnet56.lua": ["--steps", "2", "--batch-size", "16", "--eval-limit", "32",
                             "--eval-batch-size", "32"],
    "char_lm.lua": ["--steps", "4", "--eval-steps", "2"],
    "fashion_mnist_lstm.lua": ["--train-limit", "640", "--epochs", "1", "--eval-limit", "500"],
}


def readme_commands(root):
    text = open(os.path.join(root, "README.md")).read()
    block = text.split("\n## Using it\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for line in block.splitlines():
        line = line.strip()
        if not line.startswith("build/drun") or "[" in line:  # the synopsis line
            continue
        commands.append(line.split("  #", 1)[0].strip())
    return commands


def with_limits(command, drun, root, data_dir):
    """The command with drun's path, the sources' scripts, DIR and the limits."""
    parts = []
    for one in command.split("&&"):
        words = shlex.split(one)
        out = []
        for w in words:
            if w == "build/drun":
                w = drun
            elif w.startswith("scripts/"):
                w = os.path.join(root, w)
            elif w == "DIR":
                w = data_dir
            out.append(w)
        if any(w.startswith(os.path.join(root, "scripts/")) for w in out) and "--help" not in out:
            out += LIMITS.get(next(w for w in words if w.startswith("scripts/"))[len("scripts/"):], [])
        parts.append(" ".join(shlex.quote(w) for w in out))
    return " && ".join(parts)


def make_cifar(folder):
    """CIFAR-10's binary layout: records of a label byte and 3072 pixel bytes."""
    rng = random.Random(1)
    os.makedirs(folder)
    for name, records in [(f"data_batch_{i}.bin", 16) for i in range(1, 6)] + [("test_batch.bin", 32)]:
        with open(os.path.join(folder, name), "wb") as f:
            for _ in range(records):
                f.write(bytes([rng.randrange(10)]) + rng.randbytes(3072))


def main():
    drun, root = (os.path.abspath(a) for a in sys.argv[1:3])
    commands = readme_commands(root)
    check(len(commands) >= 15, f"the README's Using it block has its commands ({len(commands)})")
    with temp_dir("readme") as tmp:
        data_dir = os.path.join(tmp, "cifar")
        make_cifar(data_dir)
        env = scheduler_free_env(OMP_NUM_THREADS="1")
        for command in commands:
            line = with_limits(command, drun, root, data_dir)
            p = run(["bash", "-c", line], timeout=300, cwd=tmp, env=env)
            said = p.stdout + p.stderr
            check(p.returncode == 0 and "nothing to do" not in said,
                  f"{command} (exit {p.returncode}{', nothing to do' if 'nothing to do' in said else ''})")
            if p.returncode != 0:
                print(said[-1500:], flush=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
