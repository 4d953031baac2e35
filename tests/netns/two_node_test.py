#!/usr/bin/python3
"""Two nodes on one machine (issue 3, done-when 4): two Linux network
namespaces joined by a veth pair, each with its own UTS namespace and
hostname, act as two nodes. mpirun runs inside node A; Open MPI starts the
daemon of node B through a launch agent (plm_rsh_agent, called as
"agent HOST command...") that enters B's namespace instead of using ssh. A
2-node x 2-worker AllReduce run of tests/netns/two_nodes.lua must succeed,
with ranks 0-1 on one host and 2-3 on the other.

Only the veth pair inside the two namespaces gets addresses (10.211.0.0/24);
the root namespace's links, addresses and routes are never touched. The
namespaces carry this process's PID in their names, and are removed at the
end (also on failure or SIGTERM), after every process in them is killed.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): without it the test fails, it
does not skip. Usage: two_node_test.py DRUN SOURCE_ROOT"""
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

SUBNET = "10.211.0.0/24"
RUN_TIMEOUT = 120  # seconds for the mpirun job; meson's limit for the test is 180

checks = []


class Interrupted(Exception):
    pass


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    checks.append(bool(ok))
    return ok


def sh(*cmd, check_rc=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


class Node:
    def __init__(self, letter, pid, ip, dev):
        self.ns = f"drun-{letter}-{pid}"        # network namespace
        self.host = f"drun-node{letter}{pid}"   # hostname in its UTS namespace
        self.ip = ip
        self.dev = dev                          # its end of the veth pair


def ns_pids(ns):
    r = sh("ip", "netns", "pids", ns, check_rc=False)
    return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def netns_names():
    r = sh("ip", "netns", "list", check_rc=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def ns_inode(ns):
    try:
        return os.stat(f"/run/netns/{ns}").st_ino
    except OSError:
        return None


def procs_in(inodes):
    """PIDs of processes whose network namespace is one of these (by inode);
    works after the namespaces' names are gone."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}/ns/net").st_ino in inodes:
                    found.append(int(d))
            except OSError:
                pass
    return found


def teardown(nodes):
    """Kill whatever runs in the namespaces (mpirun, agent, orted, ranks), then
    delete them; deleting the namespace that holds one end removes the veth pair."""
    for _ in range(50):
        pids = [p for n in nodes for p in ns_pids(n.ns)]
        if not pids:
            break
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    for n in nodes:
        if n.ns in netns_names():
            sh("ip", "netns", "del", n.ns, check_rc=False)


def setup(a, b):
    for n in (a, b):
        sh("ip", "netns", "add", n.ns)
    # Create the pair inside A with its peer directly in B: it never appears in
    # the root namespace.
    sh("ip", "-n", a.ns, "link", "add", a.dev, "type", "veth", "peer", "name", b.dev,
       "netns", b.ns)
    for n in (a, b):
        sh("ip", "-n", n.ns, "link", "set", "lo", "up")
        sh("ip", "-n", n.ns, "addr", "add", f"{n.ip}/24", "dev", n.dev)
        sh("ip", "-n", n.ns, "link", "set", n.dev, "up")


AGENT = r"""#!/bin/sh
# Launch agent for Open MPI (plm_rsh_agent), written by two_node_test.py.
# Called like ssh, "agent HOST command...": runs the command with /bin/sh -c
# inside HOST's network namespace, in a UTS namespace with HOST's hostname, and
# with a clean environment as ssh would give it.
host=$1; shift
echo "agent: $host $*" >> '{log}'
case "$host" in
{cases}
  *) echo "netns agent: unknown host '$host'" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts env -i PATH='{path}' HOME=/root TMPDIR='{tmp}' \
  /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$*"' "$name" "$@"
"""


def veth_counters(node):
    """(rx_bytes, tx_bytes) of the node's veth end."""
    out = {}
    for k in ("rx_bytes", "tx_bytes"):
        r = sh("ip", "netns", "exec", node.ns, "cat", f"/sys/class/net/{node.dev}/statistics/{k}",
               check_rc=False)
        out[k] = int(r.stdout.strip() or 0)
    return out["rx_bytes"], out["tx_bytes"]


def run_job(drun, root, a, b, tmp):
    agent = os.path.join(tmp, "netns_agent")
    log = os.path.join(tmp, "agent.log")
    cases = "\n".join(f"  {n.ip}|{n.host}) ns={n.ns}; name={n.host} ;;" for n in (a, b))
    with open(agent, "w") as f:
        f.write(AGENT.format(log=log, cases=cases, path=os.environ.get("PATH", "/usr/bin:/bin"),
                             tmp=tmp))
    os.chmod(agent, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)

    mpirun = shutil.which("mpirun") or "/usr/bin/mpirun"
    cmd = ["ip", "netns", "exec", a.ns, "unshare", "--uts", "/bin/sh", "-c",
           'hostname "$0" && exec "$@"', a.host,
           mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
           "--host", f"{a.ip}:2,{b.ip}:2", "-np", "4",
           "--mca", "plm", "rsh", "--mca", "plm_rsh_agent", agent,
           "--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp",
           "--mca", "btl_tcp_if_include", SUBNET, "--mca", "oob_tcp_if_include", SUBNET,
           "--mca", "orte_tmpdir_base", tmp,
           "-x", "OMP_NUM_THREADS=1", "-x", "OPENBLAS_NUM_THREADS=1",
           drun, os.path.join(root, "tests/netns/two_nodes.lua")]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", TMPDIR=tmp)
    print("$ " + " ".join(cmd), flush=True)
    start = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    took = time.time() - start
    agent_calls = open(log).read() if os.path.exists(log) else ""
    print("--- agent calls ---\n" + agent_calls, end="")
    return rc, out, err, took, agent_calls


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    drun, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pid = os.getpid()
    a = Node("a", pid, "10.211.0.1", "drunva")
    b = Node("b", pid, "10.211.0.2", "drunvb")

    # meson sends SIGTERM on timeout: turn it into an exception so that the
    # namespaces are still removed.
    def on_signal(signum, _frame):
        raise Interrupted(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    tmp = tempfile.mkdtemp(prefix="drun-netns-")
    inodes = set()
    try:
        try:
            setup(a, b)
        except (RuntimeError, OSError) as e:
            check(False, "create two network namespaces joined by a veth pair: "
                  f"{e}\n     (this test needs root: CAP_NET_ADMIN and CAP_SYS_ADMIN for ip netns)")
            return 1
        inodes.update(i for i in (ns_inode(a.ns), ns_inode(b.ns)) if i)
        check(True, f"namespaces {a.ns} ({a.ip}, host {a.host}) and {b.ns} ({b.ip}, host {b.host})")
        before = veth_counters(b)

        rc, out, err, took, agent_calls = run_job(drun, root, a, b, tmp)
        print(out, end="" if out.endswith("\n") or not out else "\n")
        ok = check(rc == 0, f"mpirun exits 0 after {took:.1f} s (got {rc})")
        if not ok:
            print("--- mpirun stderr ---\n" + err[-4000:])

        ranks = {}
        for m in re.finditer(r"rank (\d+) host (\S+) role (\w+) workers (\d+)", out):
            ranks[int(m.group(1))] = (m.group(2), m.group(3), int(m.group(4)))
        check(sorted(ranks) == [0, 1, 2, 3] and all(w == 4 for _, _, w in ranks.values()),
              f"4 ranks report, each in a 4-worker job: {sorted(ranks)}")
        hosts = {}
        for r, (h, _, _) in ranks.items():
            hosts.setdefault(h, []).append(r)
        hosts = {h: sorted(rs) for h, rs in hosts.items()}
        check(hosts == {a.host: [0, 1], b.host: [2, 3]} if ranks else False,
              f"2 distinct hosts with 2 ranks each, ranks 0-1 on {a.host} and 2-3 on {b.host}: "
              f"{hosts}")
        calls = len(agent_calls.splitlines())
        check(f"agent: {b.ip} " in agent_calls,
              f"node B's daemon was started through the launch agent ({calls} call(s))")
        m = re.search(r"final loss (\S+)", out)
        loss = float(m.group(1)) if m else float("nan")
        check(m is not None and math.isfinite(loss) and loss < 0.69,
              f"training finished: chief's final loss {loss:.4f} (< 0.69, ln 2)")
        after = veth_counters(b)
        rx, tx = after[0] - before[0], after[1] - before[1]
        check(rx > 0 and tx > 0, f"the ranks talked over the veth pair: node B got {rx} bytes, "
              f"sent {tx} bytes on {b.dev}")
    except (Interrupted, KeyboardInterrupt) as e:
        check(False, f"interrupted ({e or 'SIGINT'}) before the end")
    finally:
        teardown([a, b])
        shutil.rmtree(tmp, ignore_errors=True)
        left_ns = [n for n in netns_names() if n in (a.ns, b.ns)]
        time.sleep(0.2)
        left_pids = procs_in(inodes) if inodes else []
        check(not left_ns and not left_pids and not os.path.exists(tmp),
              f"cleaned up: namespaces left {left_ns}, processes left {left_pids}")
        passed = sum(checks)
        print(f"{passed} passed, {len(checks) - passed} failed", flush=True)
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
