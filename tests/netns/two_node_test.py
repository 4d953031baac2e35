#!/usr/bin/python3
"""Two nodes on one machine: two network namespaces joined by a veth pair act
as two nodes (tests/netns/nodes.py), so that jobs across nodes are tested
without a cluster. Two 2-node x 2-worker jobs must succeed, with ranks 0-1 on
one host and 2-3 on the other:
- tests/netns/two_nodes.lua, an AllReduce run of drun itself;
- tests/dist/allreduce_equivalence across the nodes: the hierarchical sum
  (node-shared memory within a node, then across nodes per slice) and flat
  MPI_Iallreduce each give the weights of one worker on the global batch.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): without it the test fails, it
does not skip. Usage: two_node_test.py DRUN ALLREDUCE_EQUIVALENCE SOURCE_ROOT"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from nodes import Interrupted, TwoNodes  # noqa: E402
from testlib import check, summary  # noqa: E402

RUN_TIMEOUT = 120  # seconds for each mpirun job; meson's limit for the test is 300


def ranks_and_hosts(nodes, out):
    ranks = {}
    for m in re.finditer(r"rank (\d+) host (\S+) role (\w+) workers (\d+)", out):
        ranks[int(m.group(1))] = (m.group(2), m.group(3), int(m.group(4)))
    check(sorted(ranks) == [0, 1, 2, 3] and all(w == 4 for _, _, w in ranks.values()),
          f"4 ranks report, each in a 4-worker job: {sorted(ranks)}")
    hosts = {}
    for r, (h, _, _) in ranks.items():
        hosts.setdefault(h, []).append(r)
    hosts = {h: sorted(rs) for h, rs in hosts.items()}
    a, b = nodes.a, nodes.b
    check(hosts == {a.host: [0, 1], b.host: [2, 3]} if ranks else False,
          f"2 distinct hosts with 2 ranks each, ranks 0-1 on {a.host} and 2-3 on {b.host}: "
          f"{hosts}")


def job(nodes, argv, what):
    print("$ " + " ".join(nodes.mpirun(2, argv)), flush=True)
    rc, out, err, took = nodes.run(2, argv, RUN_TIMEOUT)
    print(out, end="" if out.endswith("\n") or not out else "\n")
    if not check(rc == 0, f"{what}: mpirun exits 0 after {took:.1f} s (got {rc})"):
        print("--- mpirun stderr ---\n" + err[-4000:])
    return out


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    drun, equivalence, root = (os.path.abspath(p) for p in sys.argv[1:])
    nodes = None
    try:
        try:
            nodes = TwoNodes().__enter__()
        except (RuntimeError, OSError) as e:
            check(False, "create two network namespaces joined by a veth pair: "
                  f"{e}\n     (this test needs root: CAP_NET_ADMIN and CAP_SYS_ADMIN for ip netns)")
            return 1
        a, b = nodes.a, nodes.b
        print(f"namespaces {a.ns} ({a.ip}, host {a.host}) and {b.ns} ({b.ip}, host {b.host})",
              flush=True)
        before = nodes.veth_counters(b)

        out = job(nodes, [drun, os.path.join(root, "tests/netns/two_nodes.lua")], "drun AllReduce")
        ranks_and_hosts(nodes, out)
        calls = nodes.agent_calls()
        print("--- agent calls ---\n" + calls, end="")
        check(f"agent: {b.ip} " in calls,
              f"node B's daemon was started through the launch agent "
              f"({len(calls.splitlines())} call(s))")
        m = re.search(r"final loss (\S+)", out)
        loss = float(m.group(1)) if m else float("nan")
        check(m is not None and math.isfinite(loss) and loss < 0.69,
              f"training finished: chief's final loss {loss:.4f} (< 0.69, ln 2)")
        after = nodes.veth_counters(b)
        rx, tx = after[0] - before[0], after[1] - before[1]
        check(rx > 0 and tx > 0, f"the ranks talked over the veth pair: node B got {rx} bytes, "
              f"sent {tx} bytes on {b.dev}")

        out = job(nodes, [equivalence], "AllReduce against one worker, across the nodes")
        for kind in ("hierarchical", "MPI_Iallreduce"):
            n = len(re.findall(rf"rank \d of 4, {kind}.*max \|w_allreduce - w_single\| = ", out))
            check(n == 4, f"{kind}: 4 of 4 ranks ran it across the nodes (got {n})")
        check("4 of 4 ranks agree within 1e-5" in out,
              "both give one worker's weights on the global batch within 1e-5")
    except (Interrupted, KeyboardInterrupt) as e:
        check(False, f"interrupted ({e or 'SIGINT'}) before the end")
    finally:
        if nodes:
            nodes.stop()
            left = nodes.leftovers()
            check(not left, f"cleaned up: left {left}")
        rc = summary()
    return rc


if __name__ == "__main__":
    sys.exit(main())
