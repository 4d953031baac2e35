#!/usr/bin/python3
"""docs/lua-api.md against the code: every function, method, option and value
name that tests/lua/lua_api_surface.lua reads from the drun module (run by
build/drun) must be in the reference, and every name the reference gives must
exist. In the reference, the backticked names in a `###` heading are
functions or methods; the backticked names in the first column of a table
under it are their options (or, under a heading of values such as
`activation`, the names it takes).
Usage: lua_api_drift.py DRUN_EXE SOURCE_ROOT"""
import os
import re
import subprocess
import sys

DRUN, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DOC = os.path.join(ROOT, "docs", "lua-api.md")
SURFACE = os.path.join(ROOT, "tests", "lua", "lua_api_surface.lua")

HEADING_NAME = re.compile(r"`([A-Za-z_][\w.:*]*)")
KEY = re.compile(r"^[A-Za-z_]\w*$")


def code_names():
    p = subprocess.run([DRUN, SURFACE], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, DRUN_THREADS="1"))
    if p.returncode != 0:
        sys.exit("lua_api_surface.lua failed (exit %d):\n%s%s" % (p.returncode, p.stdout[-3000:],
                                                                p.stderr[-3000:]))
    return {line.strip() for line in p.stdout.splitlines() if line.strip()}


def doc_names(text):
    """(names, where): the names the reference documents and, for each, its line."""
    names, where, section = set(), {}, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            section = HEADING_NAME.findall(line) if line.startswith("### ") else []
            for name in section:
                # Values (`activation`) and families (`drun.nn.*`) head tables only.
                if ("." in name or ":" in name) and "*" not in name:
                    names.add(name)
                    where.setdefault(name, number)
            continue
        if not section or not line.startswith("|"):
            continue
        cells = line.split("|")
        first = cells[1] if len(cells) > 2 else ""
        for key in re.findall(r"`([^`]*)`", first):
            if KEY.match(key):
                for name in section:
                    entry = name + " " + key
                    names.add(entry)
                    where.setdefault(entry, number)
    return names, where


def compare(code, doc):
    return sorted(code - doc), sorted(doc - code)


def main():
    with open(DOC) as f:
        text = f.read()
    code = code_names()
    doc, where = doc_names(text)
    # The walk found the API (functions, options and values of every family).
    for sample in ("drun.nn.Dense", "drun.nn.Dense units", "Model:fit epochs", "drun.nn.* name",
                   "Dataset:split fraction", "activation relu", "drun.strategy.named all_reduce"):
        assert sample in code, "lua_api_surface.lua no longer reports %r" % sample
    undocumented, unknown = compare(code, doc)
    for name in undocumented:
        print("not in docs/lua-api.md: %s" % name)
    for name in unknown:
        print("docs/lua-api.md:%d: %s is not in the code" % (where[name], name))

    # The comparison can fail: the reference without its `units` row lacks
    # drun.nn.Dense units, and with an invented option has one too many.
    lines = text.splitlines()
    units_row = next(i for i, l in enumerate(lines) if l.startswith("| `units` |"))
    trimmed = "\n".join(lines[:units_row] + lines[units_row + 1:])
    assert "drun.nn.Dense units" in compare(code, doc_names(trimmed)[0])[0], \
        "removing the units row went unnoticed"
    invented = "\n".join(lines[:units_row] + ["| `no_such_option` | | | |"] + lines[units_row:])
    assert "drun.nn.Dense no_such_option" in compare(code, doc_names(invented)[0])[1], \
        "an invented option went unnoticed"

    if undocumented or unknown:
        print("%d names undocumented, %d documented names unknown to the code"
              % (len(undocumented), len(unknown)))
        return 1
    print("docs/lua-api.md matches the code: %d names" % len(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
