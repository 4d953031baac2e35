#!/usr/bin/python3
"""drun inside a recorded LSF allocation of two POWER9 nodes with 6 GPUs
each, with jsrun on PATH (tests/dist/jsrun_standin.py, which checks the
resource file as jsrun does and starts the ranks through mpirun): --dry-run
plans jsrun resource sets (a parameter server and 6 workers a node, one GPU
per worker); a real start gives every rank the role and the one GPU the plan
gives it (DRUN_ROLE and CUDA_VISIBLE_DEVICES read inside the rank), from
drun itself and from platforms/lsf/drun.lsf; with
--launcher mpirun, or without jsrun, the plan is mpirun's as before.
Usage: jsrun_test.py DRUN SOURCE_ROOT"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, scheduler_free_env, summary, temp_dir  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# What LSF sets in a `bsub -nnodes 2` job on a Summit-like system: the batch
# (launch) node first with one slot, then each compute node's 42 cores.
LSF = {"LSB_JOBID": "1130207", "LSB_MCPU_HOSTS": "batch2 1 f07n02 42 f07n03 42",
       "LSB_HOSTS": "batch2 " + "f07n02 " * 42 + "f07n03 " * 42, "LSB_DJOB_NUMPROC": "85",
       "LSB_QUEUE": "batch", "LS_SUBCWD": "/gpfs/home/user"}
ERF_LINE = re.compile(r"^rank: (\d+): \{ hostname: (\S+); cpu: \{(\d+)-(\d+)\}(?: ; gpu: \{(\d+)\})? \}$",
                      re.M)
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(chief|worker|ps)\s+(\d+)\s+(\S+)\s+(\d+)\s*$", re.M)


def main():
    drun, root = (os.path.abspath(a) for a in sys.argv[1:3])
    script = os.path.join(HERE, "rank_environment.lua")
    with temp_dir("jsrun") as tmp:
        bin_dir = os.path.join(tmp, "bin")
        os.makedirs(bin_dir)
        os.symlink(os.path.join(HERE, "jsrun_standin.py"), os.path.join(bin_dir, "jsrun"))
        env = scheduler_free_env(**LSF, PATH=bin_dir + os.pathsep + os.environ["PATH"])
        flags = ["--gpus-per-node", "6"]

        p = run([drun, "--dry-run", *flags, script], timeout=60, env=env)
        rows = ROW.findall(p.stdout)
        erf = {int(m[0]): (m[1], int(m[2]), int(m[3]), m[4] or None) for m in ERF_LINE.findall(p.stdout)}
        check(p.returncode == 0 and "started by jsrun" in p.stdout,
              f"inside LSF with jsrun on PATH the plan starts ranks with jsrun ({p.returncode}: "
              f"{p.stderr[-300:]})")
        check([(r[1], r[2]) for r in rows] == [("f07n02", "ps")] + [("f07n02", "chief")]
              + [("f07n02", "worker")] * 5 + [("f07n03", "ps")] + [("f07n03", "worker")] * 6,
              f"a parameter server and 6 workers on each compute node, none on batch2 ({rows})")
        check(sorted(erf) == list(range(14)), f"a resource set for each of the 14 ranks ({sorted(erf)})")
        plan = {int(r[0]): (r[1], r[2], r[4]) for r in rows}
        gpus_ok = all(erf.get(rank, ("", 0, 0, None))[3] == (None if gpu == "-" else gpu)
                      and erf[rank][0] == host for rank, (host, role, gpu) in plan.items())
        check(gpus_ok, f"each worker's resource set has its one GPU, a server's none ({erf})")
        for host in ("f07n02", "f07n03"):
            gpus = sorted(int(v[3]) for v in erf.values() if v[0] == host and v[3] is not None)
            cpus = sorted((v[1], v[2]) for v in erf.values() if v[0] == host)
            disjoint = all(a[1] < b[0] for a, b in zip(cpus, cpus[1:]))
            check(gpus == list(range(6)) and disjoint and cpus[-1][1] < 168,
                  f"{host}: GPUs 0-5 once each, CPU ranges apart within 42 SMT4 cores ({cpus})")

        out = os.path.join(tmp, "ranks")
        os.makedirs(out)
        p = run([drun, *flags, script, "--out", out], timeout=240, env=env)
        check(p.returncode == 0, f"the job jsrun started exits 0 ({p.returncode}: {p.stderr[-800:]})")
        seen = {}
        for rank in range(14):
            try:
                with open(os.path.join(out, f"rank-{rank}.json")) as f:
                    seen[rank] = json.load(f)
            except (OSError, ValueError):
                pass
        check(sorted(seen) == list(range(14)), f"every rank wrote what it saw ({sorted(seen)})")
        wrong = [(rank, s) for rank, s in seen.items()
                 if s["DRUN_ROLE"] != plan[rank][1] or s["role"] != plan[rank][1]
                 or s["CUDA_VISIBLE_DEVICES"] != ("" if plan[rank][2] == "-" else plan[rank][2])
                 or s["JSM_NAMESPACE_RANK"] != str(rank)]
        check(seen and not wrong,
              f"every rank has the role and the one GPU of the plan ({wrong[:3]})")

        # The LSF template, as bsub runs it, starts the same job through jsrun.
        out = os.path.join(tmp, "template")
        os.makedirs(out)
        p = run(["bash", os.path.join(root, "platforms/lsf/drun.lsf")], timeout=240, cwd=tmp,
                env={**env, "DRUN": drun, "DRUN_ARGS": f"--gpus-per-node 6 {script} --out {out}"})
        check(p.returncode == 0 and " jsrun --erf_input " in p.stderr
              and len(os.listdir(out)) == 14,
              f"platforms/lsf/drun.lsf starts the 14 ranks with jsrun ({p.returncode}: "
              f"{(p.stdout + p.stderr)[-500:]})")

        p = run([drun, "--dry-run", "--launcher", "mpirun", *flags, script], timeout=60, env=env)
        check(p.returncode == 0 and "started by mpirun" in p.stdout and "erf" not in p.stdout,
              f"--launcher mpirun still plans mpirun ({p.stdout[-300:]})")
        no_jsrun = scheduler_free_env(**LSF)
        p = run([drun, "--dry-run", *flags, script], timeout=60, env=no_jsrun)
        check(p.returncode == 0 and "started by mpirun" in p.stdout,
              f"without jsrun on PATH the plan is mpirun's ({p.stdout[-200:]})")
        p = run([drun, "--dry-run", "--launcher", "jsrun", *flags, script], timeout=60,
                env=scheduler_free_env(PATH=env["PATH"]))
        check(p.returncode != 0 and "LSB_JOBID" in p.stderr and len(p.stderr.splitlines()) == 1,
              f"--launcher jsrun outside LSF: a one-line error ({p.returncode}: {p.stderr[-200:]})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
