#!/usr/bin/python3
"""The seed's DNNRegressor on iris (scripts/iris_dnn_regressor.lua, 1000
steps) runs locally and with 1 parameter server + 2 workers (ps_sync and
ps_async); each run's final mean squared error on the 30 held-out rows is in
summary.json and below 0.3 (measured: 0.125 local, 0.124 ps_sync, ~0.11
ps_async; always predicting the mean gives 0.584).
Usage: iris_test.py DRUN SOURCE_ROOT"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402

BAR = 0.3


def main():
    drun, root = sys.argv[1], sys.argv[2]
    script = os.path.join(root, "scripts/iris_dnn_regressor.lua")
    with temp_dir("iris") as tmp:
        for name, args in (("local", []), ("ps_sync", ["-np", "2"]), ("ps_async", ["-np", "2"])):
            d = os.path.join(tmp, name)
            strategy = [] if name == "local" else ["--strategy", name]
            p = run([drun, "-q", *args, script, "--model-dir", d, *strategy], timeout=300)
            summary_json = {}
            if p.returncode == 0 and os.path.exists(os.path.join(d, "summary.json")):
                with open(os.path.join(d, "summary.json")) as f:
                    summary_json = json.load(f)
            mse = summary_json.get("eval", {}).get("mse")
            workers = summary_json.get("workers")
            servers = os.path.exists(os.path.join(d, "ps-0.h5"))
            check(p.returncode == 0 and mse is not None and mse < BAR
                  and workers == (1 if name == "local" else 2) and servers == (name != "local"),
                  f"{name}: exit {p.returncode}, mse {mse} (< {BAR}), workers {workers}, "
                  f"server state written {servers}", p.stderr[-1500:])
    return summary()


if __name__ == "__main__":
    sys.exit(main())
