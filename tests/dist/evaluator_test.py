#!/usr/bin/python3
"""The evaluator (issue 5): `drun --evaluator script.lua ...` beside a training
run with checkpoints evaluates new checkpoints as they appear, in order, the
last one being the final step's, writes eval_results.json and TensorBoard
eval events, and exits 0 by itself once the training is over; started after
the training, it evaluates the final checkpoint and exits.
Usage: evaluator_test.py DRUN SOURCE_ROOT"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    drun, root = sys.argv[1], sys.argv[2]
    script = os.path.join(root, "scripts/fashion_mnist.lua")
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory(prefix="drun_evaluator_") as d:
        args = [script, "--train-limit", "6400", "--epochs", "3", "--steps", "300",
                "--save-checkpoints-steps", "50", "--model-dir", d]
        evaluator = subprocess.Popen([drun, "--evaluator", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        train = subprocess.run([drun, "-q", *args], capture_output=True, text=True, timeout=300)
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
        check(any(f.startswith("events.out.tfevents") for f in os.listdir(os.path.join(d, "eval"))),
              "TensorBoard eval events written")

        late = subprocess.run([drun, "--evaluator", *args], capture_output=True, text=True, timeout=120)
        with open(os.path.join(d, "eval_results.json")) as f:
            again = json.load(f)
        check(late.returncode == 0 and [r["global_step"] for r in again] == [300],
              f"started after the training: the final checkpoint only, then done ({late.stderr[-300:]})")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
