"""Two "nodes" on one machine for Open MPI jobs: two Linux network namespaces
joined by a veth pair, each with its own UTS namespace and host name. mpirun
runs inside node A; Open MPI starts node B's daemon through a launch agent
(plm_rsh_agent, called as "agent HOST command...") that enters B's namespace
instead of using ssh. Used by tests/netns/two_node_test.py and
tools/bench/hierarchical.py.

Only the veth pair inside the two namespaces gets addresses (10.211.0.0/24);
the root namespace's links, addresses and routes are never touched. The
namespaces carry this process's PID in their names. `with TwoNodes() as n:`
removes them at the end, after killing every process in them, also when the
body raises or SIGTERM/SIGHUP arrive (meson's timeout). Needs root
(CAP_NET_ADMIN and CAP_SYS_ADMIN)."""
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time

SUBNET = "10.211.0.0/24"


class Interrupted(Exception):
    pass


def sh(*cmd, check_rc=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def netns_names():
    r = sh("ip", "netns", "list", check_rc=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


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


def kill_all(pids_of, tries=100):
    """SIGKILL whatever pids_of() lists until it lists nothing (a process may
    fork while it dies) or `tries` rounds pass; returns what is left."""
    for _ in range(tries):
        pids = pids_of()
        if not pids:
            return []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    return pids_of()


class Node:
    def __init__(self, letter, pid, ip, dev):
        self.ns = f"drun-{letter}-{pid}"        # network namespace
        self.host = f"drun-node{letter}{pid}"   # hostname in its UTS namespace
        self.ip = ip
        self.dev = dev                          # its end of the veth pair


AGENT = r"""#!/bin/sh
# Launch agent for Open MPI (plm_rsh_agent), written by tests/netns/nodes.py.
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


class TwoNodes:
    def __init__(self):
        pid = os.getpid()
        self.a = Node("a", pid, "10.211.0.1", "drunva")
        self.b = Node("b", pid, "10.211.0.2", "drunvb")
        self.tmp = None
        self.inodes = set()
        self._old_handlers = {}

    # --- start -----------------------------------------------------------------

    def __enter__(self):
        def on_signal(signum, _frame):
            raise Interrupted(f"signal {signum}")
        for s in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[s] = signal.signal(s, on_signal)
        try:
            self.tmp = tempfile.mkdtemp(prefix="drun-netns-")
            self._network()
            self._agent()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _network(self):
        a, b = self.a, self.b
        for n in (a, b):
            sh("ip", "netns", "add", n.ns)
            self.inodes.add(os.stat(f"/run/netns/{n.ns}").st_ino)
        # The pair is made inside A with its peer directly in B: it never
        # appears in the root namespace.
        sh("ip", "-n", a.ns, "link", "add", a.dev, "type", "veth", "peer", "name", b.dev,
           "netns", b.ns)
        for n in (a, b):
            sh("ip", "-n", n.ns, "link", "set", "lo", "up")
            sh("ip", "-n", n.ns, "addr", "add", f"{n.ip}/24", "dev", n.dev)
            sh("ip", "-n", n.ns, "link", "set", n.dev, "up")

    def _agent(self):
        self.agent = os.path.join(self.tmp, "netns_agent")
        self.agent_log = os.path.join(self.tmp, "agent.log")
        cases = "\n".join(f"  {n.ip}|{n.host}) ns={n.ns}; name={n.host} ;;"
                          for n in (self.a, self.b))
        with open(self.agent, "w") as f:
            f.write(AGENT.format(log=self.agent_log, cases=cases,
                                 path=os.environ.get("PATH", "/usr/bin:/bin"), tmp=self.tmp))
        os.chmod(self.agent, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH |
                 stat.S_IXOTH)

    # --- use -------------------------------------------------------------------

    def shape(self, rate=None):
        """Limits each direction of the link to `rate` (tc's syntax, e.g.
        "10gbit") with a token bucket on both veth ends; None removes it.
        Delay cannot be added here: the kernels this runs on lack sch_netem
        (and sch_fq, which would honour departure times set by BPF)."""
        for n in (self.a, self.b):
            sh("ip", "netns", "exec", n.ns, "tc", "qdisc", "del", "dev", n.dev, "root",
               check_rc=False)
            if rate:
                # A burst of 1 MB keeps the bucket's refills cheap at 10 Gbit/s
                # (the kernel's timer resolution) without letting whole
                # gradient buckets through unshaped.
                sh("ip", "netns", "exec", n.ns, "tc", "qdisc", "add", "dev", n.dev, "root",
                   "tbf", "rate", rate, "burst", "1mb", "latency", "50ms")

    def mpirun(self, ranks_per_node, argv, extra_env=(), cyclic=False):
        """The command line that runs argv on ranks_per_node ranks of each
        node: ranks 0..k-1 on node A and k..2k-1 on node B, or with cyclic
        the even ranks on A and the odd ones on B (mpirun --map-by node)."""
        mpirun = shutil.which("mpirun") or "/usr/bin/mpirun"
        a, b = self.a, self.b
        k = ranks_per_node
        cmd = ["ip", "netns", "exec", a.ns, "unshare", "--uts", "/bin/sh", "-c",
               'hostname "$0" && exec "$@"', a.host,
               mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
               "--host", f"{a.ip}:{k},{b.ip}:{k}", "-np", str(2 * k),
               "--map-by", "node" if cyclic else "slot",
               "--mca", "plm", "rsh", "--mca", "plm_rsh_agent", self.agent,
               "--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp",
               "--mca", "btl_tcp_if_include", SUBNET, "--mca", "oob_tcp_if_include", SUBNET,
               "--mca", "orte_tmpdir_base", self.tmp,
               "-x", "OMP_NUM_THREADS=1", "-x", "OPENBLAS_NUM_THREADS=1"]
        for e in extra_env:
            cmd += ["-x", e]
        return cmd + list(argv)

    def run(self, ranks_per_node, argv, timeout, extra_env=(), cyclic=False):
        """Runs the job; (returncode or "timeout", stdout, stderr, seconds)."""
        cmd = self.mpirun(ranks_per_node, argv, extra_env, cyclic)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", TMPDIR=self.tmp)
        start = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return rc, out, err, time.monotonic() - start

    def agent_calls(self):
        if not os.path.exists(self.agent_log):
            return ""
        with open(self.agent_log) as f:
            return f.read()

    def veth_counters(self, node):
        """(rx_bytes, tx_bytes) of the node's veth end."""
        out = {}
        for k in ("rx_bytes", "tx_bytes"):
            r = sh("ip", "netns", "exec", node.ns, "cat",
                   f"/sys/class/net/{node.dev}/statistics/{k}", check_rc=False)
            out[k] = int(r.stdout.strip() or 0)
        return out["rx_bytes"], out["tx_bytes"]

    # --- stop ------------------------------------------------------------------

    def stop(self):
        """Kill whatever runs in the namespaces (mpirun, agent, orted, ranks),
        then delete them; deleting the namespace that holds one end removes
        the veth pair."""
        try:
            kill_all(lambda: procs_in(self.inodes) if self.inodes else [], tries=50)
            for n in (self.a, self.b):
                if n.ns in netns_names():
                    sh("ip", "netns", "del", n.ns, check_rc=False)
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
        finally:
            for s, h in self._old_handlers.items():
                signal.signal(s, h)
            self._old_handlers = {}

    def leftovers(self):
        """What stop() should have removed: for the tests' last check."""
        time.sleep(0.2)
        left = [n.ns for n in (self.a, self.b) if n.ns in netns_names()]
        left += [f"pid {p}" for p in (procs_in(self.inodes) if self.inodes else [])]
        if self.tmp and os.path.exists(self.tmp):
            left.append(self.tmp)
        return left
