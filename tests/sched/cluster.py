#!/usr/bin/python3
"""A real Slurm cluster on one machine, for tests: munged,
slurmctld and two slurmd "nodes", each slurmd in a network namespace and a UTS
namespace of its own (host names nodea and nodeb), the two joined by a veth
pair as in tests/netns. slurmctld runs beside nodea's slurmd in the first
namespace; clients (sbatch, squeue, scontrol, scancel) run there too, through
`cluster.run(...)`.

Debian's slurm-wlm and munge (tools/bootstrap installs them), no systemd:
SlurmUser=root, select/cons_tres, proctrack/linuxproc, task/none, no
accounting. Every file lives in one temporary directory (config, munge key and
socket, state, spool, logs); only the veth pair inside the namespaces gets
addresses; the root namespace's links and the system's Slurm and munge
configuration are never touched.

Whatever it starts, it stops: `with SlurmCluster() as c:` kills every process
in the namespaces (daemons, slurmstepd, job processes, however they were
forked) and munged, deletes the namespaces and the directory, also when the
body raises or SIGTERM/SIGHUP arrive (meson's timeout). Needs root.

By hand:  tests/sched/cluster.py run -- sbatch --wrap hostname
          (starts the cluster, runs the command in nodea's namespace with
          SLURM_CONF set, waits until the queue is empty, stops the cluster)"""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "netns"))
from nodes import kill_all, netns_names, procs_in as procs_in_netns  # noqa: E402

SUBNET = "10.212.0.0/24"  # tests/netns uses 10.211.0.0/24
NODES = (("nodea", "10.212.0.1", "drunsa"), ("nodeb", "10.212.0.2", "drunsb"))
CPUS_PER_NODE = 2
SHARED_BASE = "/var/tmp"


class Interrupted(Exception):
    pass


def raise_on_signal(signum, _frame):
    raise Interrupted(f"signal {signum}")


def sh(*cmd, check=True, **kw):
    r = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()}")
    return r


SLURM_CONF = """# Written by tests/sched/cluster.py: a throwaway two-node cluster.
ClusterName=drun
SlurmctldHost={ctl}({ctl_ip})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# A requeued job becomes eligible again only once the credentials of its
# last run expire (CredExpire, default 120 s): 10 s keeps the requeue test short.
AuthInfo=socket={dir}/munge.socket,cred_expire=10
# The main scheduling loop every 2 s (default 60): a job that became eligible
# by time alone starts then.
SchedulerParameters=sched_interval=2
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.%n.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
# The nodes' CPUs as written here, whatever the machine has.
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=600
{nodes}
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def under_tmp(paths):
    """The outermost of paths that lie under /tmp, relative to it."""
    rels = sorted({os.path.relpath(os.path.realpath(p), "/tmp") for p in paths})
    rels = [r for r in rels if r != "." and not r.startswith("..")]
    return [r for r in rels if not any(r.startswith(o + "/") for o in rels if o != r)]


class Node:
    def __init__(self, name, ip, dev, tag):
        self.name = name
        self.ip = ip
        self.dev = dev
        self.ns = f"drun-slurm-{name}-{tag}"


class SlurmCluster:
    """Start with `with SlurmCluster() as c:`; c.run(cmd...) runs a client."""

    def __init__(self, log=print, visible=()):
        """visible: folders (the checkout, the build) that every node must
        see at the same path although they may lie under the /tmp that each
        node has a fresh one of (a clone in the system's temporary folder)."""
        self.log = log
        self.visible = under_tmp(visible)
        tag = os.getpid()
        self.nodes = [Node(n, ip, dev, tag) for n, ip, dev in NODES]
        self.dir = None
        self.inodes = set()
        self.munged = None
        self.daemons = []
        self._old_handlers = {}

    # --- start ---------------------------------------------------------------

    def __enter__(self):
        for s in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[s] = signal.signal(s, raise_on_signal)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _start(self):
        if os.geteuid() != 0:
            raise RuntimeError("a Slurm test cluster needs root (network namespaces, SlurmUser=root)")
        for tool in ("munged", "slurmctld", "slurmd", "sbatch"):
            if not shutil.which(tool):
                raise RuntimeError(f"{tool} not found: install slurm-wlm and munge (tools/bootstrap does)")
        # Not under /tmp: each node gets a /tmp of its own (see in_node), as
        # real nodes have; this directory is the file system they share.
        self.dir = tempfile.mkdtemp(prefix="drun-slurm-", dir=SHARED_BASE)
        os.chmod(self.dir, 0o755)  # munged refuses a socket directory others may write
        for sub in ("state", "spool", "munge"):
            os.makedirs(os.path.join(self.dir, sub))
        for n in self.nodes:
            os.makedirs(os.path.join(self.dir, "tmp", n.name))
            os.chmod(os.path.join(self.dir, "tmp", n.name), 0o1777)
        # Bind-mounted over /etc/hosts in the nodes' mount namespaces: both
        # names resolve on both nodes.
        self.hosts = os.path.join(self.dir, "hosts")
        with open(self.hosts, "w") as f:
            f.write("127.0.0.1 localhost\n" + "".join(f"{n.ip} {n.name}\n" for n in self.nodes))
        self._network()
        self._munge()
        self._config()
        self._daemons()
        self._wait_for_nodes()

    def _network(self):
        a, b = self.nodes
        for n in self.nodes:
            sh("ip", "netns", "add", n.ns)
            self.inodes.add(os.stat(f"/run/netns/{n.ns}").st_ino)
        sh("ip", "-n", a.ns, "link", "add", a.dev, "type", "veth", "peer", "name", b.dev,
           "netns", b.ns)
        for n in self.nodes:
            sh("ip", "-n", n.ns, "link", "set", "lo", "up")
            sh("ip", "-n", n.ns, "addr", "add", f"{n.ip}/24", "dev", n.dev)
            sh("ip", "-n", n.ns, "link", "set", n.dev, "up")

    def _munge(self):
        key = os.path.join(self.dir, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        d = self.dir
        self.munged = subprocess.Popen(
            ["munged", "--foreground", f"--socket={d}/munge.socket", f"--key-file={key}",
             f"--pid-file={d}/munge/munged.pid", f"--log-file={d}/munge/munged.log",
             f"--seed-file={d}/munge/munged.seed", "--force"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "munge", "stderr"), "w"),
            start_new_session=True)
        self._wait(lambda: os.path.exists(f"{d}/munge.socket"), 10, "munged's socket")

    def _config(self):
        nodes = "\n".join(f"NodeName={n.name} NodeAddr={n.ip} CPUs={CPUS_PER_NODE} State=UNKNOWN"
                          for n in self.nodes)
        ctl = self.nodes[0]
        self.conf = os.path.join(self.dir, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(SLURM_CONF.format(ctl=ctl.name, ctl_ip=ctl.ip, dir=self.dir, nodes=nodes))
        for n in self.nodes:
            os.makedirs(os.path.join(self.dir, "spool", n.name))
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in [k for k in self.env if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_"))
                  and k != "SLURM_CONF"]:
            del self.env[k]

    def in_node(self, node, cmd):
        """cmd run in node's network namespace, in UTS and mount namespaces of
        its own with the node's host name, hosts file and /tmp. Not `ip netns
        exec`: it mounts a fresh /sys without /sys/fs/cgroup, and slurmd's
        cgroup plugin (loaded even with proctrack/linuxproc and task/none)
        then refuses to start. A /tmp per node because Slurm's PMIx plugin
        makes /tmp/spmix_appdir_<uid>_<job>.<step> on every node of a step
        and fails where that already exists."""
        node_tmp = os.path.join(self.dir, "tmp", node.name)
        # The visible folders are bound into the node's /tmp first, at their
        # own paths, and come along with it (--rbind).
        keep = "".join(f' && mkdir -p "$2"/{shlex.quote(rel)}'
                       f' && mount --bind /tmp/{shlex.quote(rel)} "$2"/{shlex.quote(rel)}'
                       for rel in self.visible)
        script = ('hostname "$0" && mount --bind "$1" /etc/hosts' + keep +
                  ' && mount --rbind "$2" /tmp && shift 2 && exec "$@"')
        return ["nsenter", f"--net=/run/netns/{node.ns}", "unshare", "--uts", "--mount",
                "/bin/sh", "-c", script, node.name, self.hosts, node_tmp, *cmd]

    def _spawn(self, node, cmd, name):
        err = open(os.path.join(self.dir, f"{name}.stderr"), "w")
        p = subprocess.Popen(self.in_node(node, cmd), env=self.env, stdout=err, stderr=err,
                             start_new_session=True)
        self.daemons.append((name, p))
        return p

    def _daemons(self):
        self._spawn(self.nodes[0], ["slurmctld", "-D", "-i", "-f", self.conf], "slurmctld")
        for n in self.nodes:
            self._spawn(n, ["slurmd", "-D", "-N", n.name, "-f", self.conf], f"slurmd-{n.name}")

    def _wait_for_nodes(self, limit=60):
        def idle():
            for name, p in self.daemons:
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited ({p.returncode}):\n{self.logs(name)}")
            r = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False)
            states = dict(line.split() for line in r.stdout.splitlines() if line.strip())
            return all(states.get(n.name) == "idle" for n in self.nodes)
        self._wait(idle, limit, "both nodes idle in sinfo")

    def _wait(self, ready, limit, what):
        deadline = time.time() + limit
        while time.time() < deadline:
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out after {limit} s waiting for {what}\n{self.logs()}")

    # --- use -------------------------------------------------------------------

    def run(self, *cmd, check=True, timeout=60, **kw):
        """A Slurm client (or any command) in nodea's namespaces, SLURM_CONF set."""
        r = subprocess.run(self.in_node(self.nodes[0], list(cmd)), env=kw.pop("env", self.env),
                           capture_output=True, text=True, timeout=timeout, **kw)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def job(self, job_id):
        """`scontrol show job` as a dict (JobState, ExitCode, Restarts, ...)."""
        r = self.run("scontrol", "-o", "show", "job", str(job_id), check=False)
        fields = {}
        for word in r.stdout.split():
            k, _, v = word.partition("=")
            fields[k] = v
        return fields

    def wait_job(self, job_id, states=("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                       "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"),
                 limit=300):
        deadline = time.time() + limit
        while time.time() < deadline:
            j = self.job(job_id)
            if j.get("JobState") in states:
                return j
            time.sleep(0.5)
        raise RuntimeError(f"job {job_id} still {self.job(job_id).get('JobState')} after {limit} s")

    def veth_bytes(self, node_index):
        """Bytes received + sent on a node's end of the veth pair."""
        n = self.nodes[node_index]
        stats = json.loads(sh("ip", "-n", n.ns, "-j", "-s", "link", "show", "dev", n.dev).stdout)
        return stats[0]["stats64"]["rx"]["bytes"] + stats[0]["stats64"]["tx"]["bytes"]

    def node_processes(self, node_index, comm):
        """PIDs of the processes named `comm` running on a node."""
        inode = os.stat(f"/run/netns/{self.nodes[node_index].ns}").st_ino
        found = []
        for pid in procs_in_netns({inode}):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == comm:
                        found.append(pid)
            except OSError:
                pass
        return found

    def take_away(self, node_index):
        """The node is lost: its slurmd, slurmstepd and job processes, every
        process in its namespace, killed with SIGKILL (nothing left to answer)."""
        inode = os.stat(f"/run/netns/{self.nodes[node_index].ns}").st_ino
        left = kill_all(lambda: procs_in_netns({inode}))
        if left:
            raise RuntimeError(f"processes left in {self.nodes[node_index].name}: {left}")

    def queue(self):
        return self.run("squeue", "-h", "-o", "%i %T").stdout.strip()

    def logs(self, which=None):
        out = []
        if not self.dir:
            return ""
        for f in sorted(os.listdir(self.dir)):
            if (f.endswith(".log") or f.endswith(".stderr")) and (not which or which in f):
                with open(os.path.join(self.dir, f), errors="replace") as fh:
                    out.append(f"--- {f} ---\n" + "".join(fh.readlines()[-25:]))
        return "\n".join(out)

    # --- stop ------------------------------------------------------------------

    def stop(self):
        """Everything started goes, whatever state the start reached."""
        try:
            kill_all(lambda: (procs_in_netns(self.inodes) if self.inodes else []) +
                     [p.pid for _, p in self.daemons if p.poll() is None])
            for _, p in self.daemons:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            if self.munged and self.munged.poll() is None:
                self.munged.kill()
                self.munged.wait(timeout=5)
            for n in self.nodes:
                if n.ns in netns_names():
                    sh("ip", "netns", "del", n.ns, check=False)
            if self.dir:
                shutil.rmtree(self.dir, ignore_errors=True)
        finally:
            for s, h in self._old_handlers.items():
                signal.signal(s, h)
            self._old_handlers = {}

    def leftovers(self):
        """What stop() should have removed: for the tests' last check."""
        left = [n.ns for n in self.nodes if n.ns in netns_names()]
        left += [f"pid {p}" for p in (procs_in_netns(self.inodes) if self.inodes else [])]
        left += [f"{name} pid {p.pid}" for name, p in self.daemons if p.poll() is None]
        if self.munged and self.munged.poll() is None:
            left.append(f"munged pid {self.munged.pid}")
        if self.dir and os.path.exists(self.dir):
            left.append(self.dir)
        return left


def main(argv):
    if len(argv) < 3 or argv[1] != "run" or "--" not in argv:
        print(__doc__)
        return 2
    cmd = argv[argv.index("--") + 1:]
    with SlurmCluster() as c:
        r = c.run(*cmd, check=False, timeout=600)
        print(r.stdout, end="")
        print(r.stderr, end="", file=sys.stderr)
        deadline = time.time() + 600
        while c.queue() and time.time() < deadline:
            time.sleep(1)
        rc = r.returncode
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
