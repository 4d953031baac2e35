#!/usr/bin/python3
"""The sequence-model scripts, small: scripts/char_lm.lua on the first 64 KB
of Debian's fortunes (tools/bootstrap installs them), 16-character windows,
and scripts/fashion_mnist_lstm.lua on 2,000 images.

  lstm_one_rank        char_lm --model lstm, 60 steps: summary.json's held-out
                       bits per character are loss / ln 2 and below a uniform
                       guess's log2(vocabulary).
  transformer_two_ranks  the same with --model transformer and -np 2.
  lstm_resumes_exactly   30 steps, then a rerun to 60: its ckpt-60.h5 equals
                       an uninterrupted 60-step run's bit for bit.
  fashion_mnist_lstm   one epoch on 2,000 images: test accuracy above 0.5
                       (a guess gets 0.1).

Usage: sequence_scripts_test.py DRUN COMPARE_CHECKPOINTS SOURCE_ROOT"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import run, run_cases  # noqa: E402

DRUN, COMPARE, ROOT = sys.argv[1:4]
FORTUNES = "/usr/share/games/fortunes"
CHAR_LM = os.path.join(ROOT, "scripts/char_lm.lua")


def small_corpus(d):
    """The first 64 KB of the fortunes' text files, in name order."""
    text = b""
    for name in sorted(os.listdir(FORTUNES)):
        path = os.path.join(FORTUNES, name)
        if os.path.islink(path) or not os.path.isfile(path) or "." in name:
            continue
        with open(path, "rb") as f:
            text += f.read()
        if len(text) >= 65536:
            break
    path = os.path.join(d, "corpus.txt")
    with open(path, "wb") as f:
        f.write(text[:65536])
    return path, len(set(text[:65536]))


def char_lm(d, model, steps, model_dir, np=1):
    corpus, vocabulary = small_corpus(d)
    cmd = [DRUN, "-q"] + (["-np", str(np)] if np > 1 else [])
    p = run(cmd + [CHAR_LM, "--model", model, "--path", corpus, "--sequence-length", "16",
                   "--batch-size", "16", "--steps", str(steps), "--eval-steps", "10",
                   "--model-dir", model_dir], 600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return vocabulary, p


def learns(d, model, np):
    model_dir = os.path.join(d, "run")
    vocabulary, p = char_lm(d, model, 60, model_dir, np)
    with open(os.path.join(model_dir, "summary.json")) as f:
        e = json.load(f)["eval"]
    assert abs(e["bits_per_char"] - e["loss"] / math.log(2)) < 1e-9, e
    assert e["bits_per_char"] < math.log2(vocabulary), (e, vocabulary)
    assert "bits per character" in p.stdout, p.stdout
    return f"{e['bits_per_char']:.3f} bits per character (uniform: {math.log2(vocabulary):.3f})"


def lstm_one_rank(d):
    return learns(d, "lstm", 1)


def transformer_two_ranks(d):
    return learns(d, "transformer", 2)


def lstm_resumes_exactly(d):
    straight, resumed = os.path.join(d, "straight"), os.path.join(d, "resumed")
    char_lm(d, "lstm", 60, straight)
    char_lm(d, "lstm", 30, resumed)
    _, p = char_lm(d, "lstm", 60, resumed)
    c = run([COMPARE, os.path.join(straight, "ckpt-60.h5"), os.path.join(resumed, "ckpt-60.h5")],
            120)
    assert c.returncode == 0, c.stdout + c.stderr + p.stderr[-2000:]
    return c.stdout.strip()


def fashion_mnist_lstm(d):
    p = run([DRUN, "-q", os.path.join(ROOT, "scripts/fashion_mnist_lstm.lua"), "--epochs", "1",
             "--train-limit", "2000", "--model-dir", os.path.join(d, "run")], 600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    accuracy = float(p.stdout.split("test accuracy ")[1].split(",")[0])
    assert accuracy > 0.5, p.stdout
    return f"test accuracy {accuracy:.4f}"


if __name__ == "__main__":
    sys.exit(run_cases([("lstm_one_rank", lstm_one_rank),
                        ("transformer_two_ranks", transformer_two_ranks),
                        ("lstm_resumes_exactly", lstm_resumes_exactly),
                        ("fashion_mnist_lstm", fashion_mnist_lstm)], temp="sequence"))
