#!/usr/bin/python3
"""drun --dry-run prints strategy, model, placement and rank 0's TF_CONFIG
without starting anything, from a hostfile or a recorded scheduler
environment. Usage: dry_run_test.py DRUN SOURCE_ROOT"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, scheduler_free_env, summary, temp_dir  # noqa: E402


def dry_run(drun, script, args=(), env=None, script_args=()):
    p = run([drun, "--dry-run", *args, script, *script_args], timeout=60,
            env=scheduler_free_env(**(env or {})))
    rows = re.findall(r"^\s*(\d+)\s+(\S+)\s+(chief|worker|ps)\s+(\d+)\s+(\S+)\s+(\d+)\s*$",
                      p.stdout, re.M)
    tf = re.search(r"^TF_CONFIG of rank 0: (.*)$", p.stdout, re.M)
    return p, rows, json.loads(tf.group(1)) if tf else None


def main():
    drun, root = sys.argv[1], sys.argv[2]
    script = os.path.join(root, "scripts/fashion_mnist.lua")
    with temp_dir("dry_run") as tmp:
        hostfile = os.path.join(tmp, "hosts")
        with open(hostfile, "w") as f:
            f.write("# two nodes\nnode1 slots=8\nnode2 slots=8\n")
        # Downpour uses parameter servers: the plan run tells the launcher so.
        run, rows, tf = dry_run(drun, script, ["--hostfile", hostfile, "--gpus-per-node", "4"],
                                script_args=["--strategy", "downpour"])
        check(run.returncode == 0, f"dry run exits 0 ({run.returncode}: {run.stderr[-300:]})")
        check("strategy: Downpour" in run.stdout and "Total params: 347,146" in run.stdout,
              "prints the strategy and the model summary")
        roles = [r[2] for r in rows]
        check(roles.count("ps") == 2 and roles.count("chief") + roles.count("worker") == 8,
              f"2 nodes x 4 GPUs: 2 ps and 8 workers ({roles})")
        gpus = {h: sorted(int(r[4]) for r in rows if r[1] == h and r[2] != "ps") for h in ("node1", "node2")}
        check(gpus == {"node1": [0, 1, 2, 3], "node2": [0, 1, 2, 3]}, f"GPUs 0-3 on each node ({gpus})")
        chief = [r for r in rows if r[2] == "chief"]
        check(len(chief) == 1 and chief[0][1] == "node1", "the chief is on node 0")
        check(tf is not None and len(tf["cluster"]["ps"]) == 2 and len(tf["cluster"]["worker"]) == 7
              and len(tf["cluster"]["chief"]) == 1, f"TF_CONFIG lists 1 chief, 7 workers, 2 ps ({tf})")
        check("epoch" not in run.stdout.lower() and "test accuracy" not in run.stdout,
              "nothing was trained (no epoch or evaluation lines)")

        run, rows, _ = dry_run(drun, script, ["--hostfile", hostfile, "--gpus-per-node", "4"])
        check(run.returncode == 0 and "strategy: AllReduce" in run.stdout
              and not [r for r in rows if r[2] == "ps"],
              f"AllReduce: no parameter servers ({[r[2] for r in rows]})")

        run, rows, _ = dry_run(drun, script, env={"SLURM_JOB_NODELIST": "node[1-3]",
                                                  "SLURM_GPUS_ON_NODE": "2",
                                                  "SLURM_JOB_CPUS_PER_NODE": "8(x3)"})
        hosts = [r[1] for r in rows]
        check(run.returncode == 0 and hosts == ["node1", "node1", "node2", "node2", "node3", "node3"]
              and all(r[5] == "4" for r in rows),
              f"Slurm node[1-3] x 2 GPUs: 6 workers, 2 a node, 4 threads each ({rows})")

        run, rows, _ = dry_run(drun, script, env={"LSB_JOBID": "7", "LSB_HOSTS": "batch1 a1 a1 b2 b2",
                                                  "LSB_MCPU_HOSTS": "batch1 1 a1 2 b2 2"})
        hosts = [r[1] for r in rows]
        check(run.returncode == 0 and hosts == ["a1", "a1", "b2", "b2"],
              f"LSF: the batch launch host is skipped, a worker per slot asked for ({rows})")

        # Inside `sbatch -n 2` a bare `drun script.lua` plans the 2
        # tasks asked for, not one a node; -np still wins; with servers the
        # tasks are shared (sbatch -N 2 -n 3, drun --ps 1: 1 ps + 2 workers).
        slurm_n2 = {"SLURM_JOB_NODELIST": "nodea", "SLURM_JOB_CPUS_PER_NODE": "2",
                    "SLURM_NTASKS": "2", "SLURM_TASKS_PER_NODE": "2"}
        run, rows, _ = dry_run(drun, script, env=slurm_n2)
        check(run.returncode == 0 and [r[2] for r in rows] == ["chief", "worker"]
              and all(r[5] == "1" for r in rows), f"sbatch -n 2: 2 workers, 1 thread each ({rows})")
        run, rows, _ = dry_run(drun, script, ["-np", "3"], env=slurm_n2)
        check(run.returncode == 0 and len(rows) == 3, f"-np 3 overrides the 2 tasks ({rows})")
        run, rows, _ = dry_run(drun, script, ["--ps", "1"], script_args=["--strategy", "ps_sync"],
                               env={"SLURM_JOB_NODELIST": "nodea,nodeb",
                                    "SLURM_NTASKS": "3", "SLURM_TASKS_PER_NODE": "2,1"})
        check(run.returncode == 0 and [(r[1], r[2]) for r in rows]
              == [("nodea", "ps"), ("nodea", "chief"), ("nodeb", "worker")],
              f"sbatch -N 2 -n 3, --ps 1: 1 ps + 2 workers over two nodes ({rows})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
