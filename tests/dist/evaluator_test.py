#!/usr/bin/python3
"""The evaluator: `drun --evaluator script.lua ...` beside a training
run with checkpoints evaluates new checkpoints as they appear, in order, the
last one being the final step's, writes eval_results.json and TensorBoard
eval events, and exits 0 by itself once the training is over; started after
the training, it evaluates the final checkpoint and exits.
Usage: evaluator_test.py DRUN SOURCE_ROOT"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402


def main():
    drun, root = sys.argv[1], sys.argv[2]
    script = os.path.join(root, "scripts/fashion_mnist.lua")
    with temp_dir("evaluator") as d:
        args = [script, "--train-limit", "6400", "--epochs", "3", "--steps", "300",
                "--save-checkpoints-steps", "50", "--model-dir", d]
        evaluator = subprocess.Popen([drun, "--evaluator", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        train = run([drun, "-q", *args], timeout=300)
        check(train.returncode == 0, f"training exits 0 ({train.stderr[-300:]})")
        try:
            out, err = evaluator.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            evaluator.kill()
            out, err = evaluator.communicate()
            check(False, "the evaluator did not end within 120 s of the training")
        check(evaluator.returncode == 0, f"the evaluator exits 0 ({err[-500:]})")
        results = []
        if os.path.exists(os.path.join(d, "eval_results.json")):
            with open(os.path.join(d, "eval_results.json")) as f:
                results = json.load(f)
        steps = [r["global_step"] for r in results]
        check(len(steps) >= 1 and steps[-1] == 300 and steps == sorted(set(steps)),
              f"checkpoints evaluated in order, the last the final step 300 ({steps})")
        check(all(r.get("accuracy", 0) > 0.5 and r["examples"] == 10000 for r in results),
              f"each on the whole test set ({[round(r.get('accuracy', 0), 4) for r in results]})")
        check("evaluator: checkpoint 300" in out and "training is over" in out,
              "it says what it evaluated and why it stopped")
        eval_dir = os.path.join(d, "eval")
        check(os.path.isdir(eval_dir)
              and any(f.startswith("events.out.tfevents") for f in os.listdir(eval_dir)),
              "TensorBoard eval events written")

        late = run([drun, "--evaluator", *args], timeout=120)
        with open(os.path.join(d, "eval_results.json")) as f:
            again = json.load(f)
        check(late.returncode == 0 and [r["global_step"] for r in again] == [300],
              f"started after the training: the final checkpoint only, then done ({late.stderr[-300:]})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
