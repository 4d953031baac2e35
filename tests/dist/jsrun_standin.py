#!/usr/bin/python3
"""A stand-in for IBM's jsrun (LSF's job step manager on POWER9 + GPU systems),
for tests on a machine without LSF: it takes the options drun passes
(--erf_input FILE; --smpiargs and --stdio_* are accepted and ignored), checks
the explicit resource file as jsrun would (every host one of the
allocation's compute hosts in LSB_MCPU_HOSTS, ranks 0..N-1 once each, GPUs
within the node's, no GPU given twice on a host), and starts the ranks
through Open MPI's mpirun on this machine. Each rank then runs this script
again (--rank), which sets what jsrun sets in a resource set
(CUDA_VISIBLE_DEVICES: the set's GPU, empty without one; JSM_NAMESPACE_RANK,
_SIZE, _LOCAL_RANK, _LOCAL_SIZE) and execs the program.

Usage: jsrun --erf_input FILE PROGRAM [ARGS...]"""
import os
import re
import sys

GPUS_PER_NODE = 6  # an AC922's V100s
LINE = re.compile(r"^rank:\s*(\d+)\s*:\s*\{(.*)\}\s*$")
PREAMBLE = {"cpu_index_using", "overlapping_rs", "oversubscribe_cpu", "oversubscribe_gpu",
            "launch_distribution", "skip_missing_cpu", "skip_missing_gpu"}


def fail(message):
    print(f"jsrun: {message}", file=sys.stderr)
    sys.exit(2)


def read_erf(path):
    """{rank: {"hostname": h, "cpu": "a-b", "gpu": "g" or None}} from an ERF."""
    ranks = {}
    try:
        text = open(path).read()
    except OSError as e:
        fail(f"--erf_input {path}: {e.strerror}")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = LINE.match(line)
        if not m:
            key = line.split(":")[0].strip()
            if key not in PREAMBLE:
                fail(f"{path}:{n}: not a resource set or preamble line: {line!r}")
            continue
        fields = {}
        for part in m.group(2).split(";"):
            key, _, value = part.partition(":")
            fields[key.strip()] = value.strip().strip("{}").strip()
        if "hostname" not in fields or "cpu" not in fields:
            fail(f"{path}:{n}: a resource set needs hostname and cpu: {line!r}")
        rank = int(m.group(1))
        if rank in ranks:
            fail(f"{path}:{n}: rank {rank} given twice")
        ranks[rank] = {"hostname": fields["hostname"], "cpu": fields["cpu"],
                       "gpu": fields.get("gpu")}
    if sorted(ranks) != list(range(len(ranks))) or not ranks:
        fail(f"{path}: ranks are not 0..N-1 ({sorted(ranks)})")
    return ranks


def check_allocation(ranks):
    words = os.environ.get("LSB_MCPU_HOSTS", "").split()
    hosts = {words[i] for i in range(0, len(words), 2) if not words[i].startswith(("batch", "login"))}
    if not hosts:
        fail("not inside an LSF allocation (no LSB_MCPU_HOSTS)")
    taken = set()
    for rank, rs in ranks.items():
        if rs["hostname"] not in hosts:
            fail(f"rank {rank}: host {rs['hostname']} is not in the allocation ({sorted(hosts)})")
        if rs["gpu"] is not None:
            gpu = int(rs["gpu"])
            if not 0 <= gpu < GPUS_PER_NODE or (rs["hostname"], gpu) in taken:
                fail(f"rank {rank}: GPU {gpu} of {rs['hostname']} is not free")
            taken.add((rs["hostname"], gpu))


def start(argv):
    erf = None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        option, _, value = argv[i].partition("=")
        if option in ("--erf_input", "--smpiargs", "--stdio_stdout", "--stdio_stderr"):
            if not value:
                i += 1
                if i == len(argv):
                    fail(f"{option} needs a value")
                value = argv[i]
            if option == "--erf_input":
                erf = value
        else:
            fail(f"this stand-in does not know option {argv[i]}")
        i += 1
    if erf is None or i == len(argv):
        fail("usage: jsrun --erf_input FILE PROGRAM [ARGS...]")
    ranks = read_erf(erf)
    check_allocation(ranks)
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
              "-np", str(len(ranks)), sys.executable, os.path.abspath(__file__), "--rank", erf,
              "--", *argv[i:]]
    os.execvp(mpirun[0], mpirun)


def become_rank(erf, program):
    ranks = read_erf(erf)
    me = int(os.environ["OMPI_COMM_WORLD_RANK"])
    rs = ranks[me]
    on_host = [r for r in sorted(ranks) if ranks[r]["hostname"] == rs["hostname"]]
    os.environ.update({
        "CUDA_VISIBLE_DEVICES": rs["gpu"] or "",
        "JSM_NAMESPACE_RANK": str(me),
        "JSM_NAMESPACE_SIZE": str(len(ranks)),
        "JSM_NAMESPACE_LOCAL_RANK": str(on_host.index(me)),
        "JSM_NAMESPACE_LOCAL_SIZE": str(len(on_host)),
    })
    os.execvp(program[0], program)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--rank" and sys.argv[3] == "--":
        become_rank(sys.argv[2], sys.argv[4:])
    start(sys.argv[1:])
