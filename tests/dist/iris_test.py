#!/usr/bin/python3
"""The seed's DNNRegressor on iris (scripts/iris_dnn_regressor.lua, 1000
steps) runs locally and with 1 parameter server + 2 workers (ps_sync and
ps_async); each run's final mean squared error on the 30 held-out rows is in
summary.json and below 0.3 (measured: 0.125 local, 0.124 ps_sync, ~0.11
ps_async; always predicting the mean gives 0.584).
Usage: iris_test.py DRUN SOURCE_ROOT"""
import json
import os
import subprocess
import sys
import tempfile

BAR = 0.3


def main():
    drun, root = sys.argv[1], sys.argv[2]
    script = os.path.join(root, "scripts/iris_dnn_regressor.lua")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="drun_iris_") as tmp:
        for name, args in (("local", []), ("ps_sync", ["-np", "2"]), ("ps_async", ["-np", "2"])):
            d = os.path.join(tmp, name)
            strategy = [] if name == "local" else ["--strategy", name]
            p = subprocess.run([drun, "-q", *args, script, "--model-dir", d, *strategy],
                               capture_output=True, text=True, timeout=300)
            summary = {}
            if p.returncode == 0 and os.path.exists(os.path.join(d, "summary.json")):
                with open(os.path.join(d, "summary.json")) as f:
                    summary = json.load(f)
            mse = summary.get("eval", {}).get("mse")
            workers = summary.get("workers")
            ok = p.returncode == 0 and mse is not None and mse < BAR and \
                workers == (1 if name == "local" else 2)
            servers = os.path.exists(os.path.join(d, "ps-0.h5"))
            ok = ok and servers == (name != "local")
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {p.returncode}, mse {mse}, workers {workers}, "
                  f"server state written {servers}" + ("" if ok else f"\n{p.stderr[-1500:]}"))
            failed += not ok
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
