#!/usr/bin/python3
"""Every strategy of the parameter-server family trains the seed CNN with 1
parameter server and 2 workers (drun -np 2 scripts/strategies/NAME.lua), every
rank exits 0, the servers write their shards and no drun process is left.

CI uses a subset: 12,000 training images, 2 epochs. The bar, 0.60 test
accuracy, sits well below the lowest of the subset runs measured here, with
two busy processes beside them (ps_async and Downpour, 0.75); with 1 epoch
the asynchronous ones depend on the machine's load (Downpour 0.65-0.73 idle,
0.56 once in a loaded CI run). tools/bench/strategies.sh measures the full 3-epoch runs (>= 0.84,
docs/strategies.md). With --device cuda the workers compute on their GPUs
(CI: a drun built with the emulated GPU of tests/unit/emulated) and
summary.json must say so. Usage: strategies_test.py DRUN SOURCE_ROOT
[--device cpu|cuda] [NAME...]"""
import json
import os
import subprocess
import sys
import tempfile
import time

LIST_STRATEGIES = """
for _, entry in ipairs(require('drun.core').registry('strategies')) do
  for _, preset in ipairs(entry.presets) do print(preset.name) end
end
"""
BAR = 0.60


def drun_processes(drun):
    """Pids of running processes whose executable is this drun."""
    target = os.path.realpath(drun)
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == target:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().split(")")[-1].split()[0] != "Z":
                        found.append(int(pid))
        except OSError:
            pass
    return found


def run(drun, root, name, tmp, device):
    model_dir = os.path.join(tmp, name)
    start = time.time()
    p = subprocess.run(
        [drun, "-q", "--device", device, "-np", "2",
         os.path.join(root, "scripts/strategies", name + ".lua"),
         "--train-limit", "12000", "--epochs", "2", "--model-dir", model_dir],
        capture_output=True, text=True, timeout=300)
    took = time.time() - start
    problems = []
    if p.returncode != 0:
        problems.append(f"exit code {p.returncode}: {p.stderr.strip()[-2000:]}")
        return problems, took, None
    with open(os.path.join(model_dir, "summary.json")) as f:
        summary = json.load(f)
    accuracy = summary.get("eval", {}).get("accuracy", 0)
    if summary.get("workers") != 2:
        problems.append(f"summary.json says workers {summary.get('workers')}, expected 2")
    if summary.get("device") != device:
        problems.append(f"summary.json says device {summary.get('device')}, expected {device}")
    if accuracy < BAR:
        problems.append(f"test accuracy {accuracy:.4f} < {BAR}")
    if not os.path.exists(os.path.join(model_dir, "ps-0.h5")):
        problems.append("the parameter server wrote no ps-0.h5")
    time.sleep(0.2)
    left = drun_processes(drun)
    if left:
        problems.append(f"drun processes left after the job: {left}")
    return problems, took, summary


def registered_strategies(drun, root):
    """The --strategy names of the parameter-server family, from drun's registry
    (distributed/strategy_list.hpp): a strategy added there is tested here."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "list_strategies.lua")
        with open(script, "w") as f:
            f.write(LIST_STRATEGIES)
        p = subprocess.run([drun, "-q", script], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit("listing the strategies failed: " + p.stderr[-2000:])
    names = [n for n in p.stdout.split() if n != "all_reduce"]
    missing = [n for n in names
               if not os.path.exists(os.path.join(root, "scripts/strategies", n + ".lua"))]
    if missing or len(names) < 12:
        sys.exit(f"strategies without a script in scripts/strategies: {missing}; listed {names}")
    return names


def main():
    drun, root, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    device = "cpu"
    if rest[:1] == ["--device"]:
        device, rest = rest[1], rest[2:]
    names = rest or registered_strategies(drun, root)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            problems, took, summary = run(drun, root, name, tmp, device)
            if summary:
                acc = summary.get("eval", {}).get("accuracy", 0)
                stats = summary.get("strategy", {})
                print(f"{name:14s} accuracy {acc:.4f}  {summary['train']['images_per_sec']:7.0f} img/s"
                      f"  {took:5.1f} s  {json.dumps(stats)}")
            for p in problems:
                print(f"{name}: FAIL: {p}")
            failed += bool(problems)
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
