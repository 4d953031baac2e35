#!/usr/bin/python3
"""tools/test's list of skips, read from a meson JSON log written here: a test
that exited 77 with the reason it printed (the line that says why, not its
last one), a case that testlib.run_cases skipped inside a test that passed,
and nothing for a test that passed or failed without skipping.
Usage: skip_report.py SOURCE_ROOT"""
import importlib.machinery
import importlib.util
import json
import os
import sys

ROOT = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(ROOT, "tests"))
from testlib import check, summary, temp_dir  # noqa: E402


def load_tool():
    path = os.path.join(ROOT, "tools", "test")
    loader = importlib.machinery.SourceFileLoader("tools_test", path)
    spec = importlib.util.spec_from_loader("tools_test", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


LOG = [
    {"name": "drun:gpu / gpu_train", "result": "SKIP", "returncode": 77,
     "stdout": "probing\nskipped: drun: --device cuda: no GPU found\n", "stderr": "bye\n"},
    {"name": "drun:gpu / backend_harness", "result": "SKIP", "returncode": 77,
     "stdout": "backend harness: no GPU found (this build has no CUDA backend); the CUDA column "
               "cannot run here\n"},
    {"name": "drun:lua / lua", "result": "OK", "returncode": 0,
     "stdout": "ok      hooks (0.1 s)\nskip    fashion: /usr/share/x not installed\n"
               "1 passed, 0 failed, 1 skipped\n"},
    {"name": "drun:unit / nn", "result": "OK", "returncode": 0, "stdout": "skip this word\n"},
    {"name": "drun:unit / io", "result": "FAIL", "returncode": 1, "stdout": "skip    x: y\n"},
    {"name": "drun:gpu / silent", "result": "SKIP", "returncode": 77, "stdout": ""},
]


def main():
    tool = load_tool()
    with temp_dir("skip_report") as tmp:
        path = os.path.join(tmp, "testlog.json")
        with open(path, "w") as f:
            for entry in LOG:
                f.write(json.dumps(entry) + "\n")
        found = tool.skips(path)
    want = [
        ("drun:gpu / gpu_train", "skipped: drun: --device cuda: no GPU found"),
        ("drun:gpu / backend_harness", "backend harness: no GPU found (this build has no CUDA "
                                       "backend); the CUDA column cannot run here"),
        ("drun:lua / lua, case fashion", "/usr/share/x not installed"),
        ("drun:gpu / silent", "(the test printed no reason)"),
    ]
    check(found == want, "each skip with its reason, nothing else", f"got {found}")
    build = os.path.join(ROOT, "build", "meson-logs")
    check(tool.log_path(["--suite", "lint"]) == os.path.join(build, "testlog.json"),
          "the default log is meson-logs/testlog.json")
    check(tool.log_path(["--logbase", "ci"]) == os.path.join(build, "ci.json")
          and tool.log_path(["--logbase=ci"]) == os.path.join(build, "ci.json"),
          "--logbase names the log read")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
