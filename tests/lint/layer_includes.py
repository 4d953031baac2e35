#!/usr/bin/python3
"""Nothing lower includes anything higher (the design's "Layers of the code"):
each folder of runtime/ includes only its own headers and those of the
folders it knows about, as the layer table below has them, and, through
those, whatever they know (train knows nn, so it may include kernels as nn
does). Every other folder of the table is one it may not include: an
`#include "FOLDER/..."` of one of them is reported with its file and line.
Usage: layer_includes.py SOURCE_ROOT"""
import os
import re
import sys

# The design's layer table, folder: the folders it knows about. base/ (Options,
# UsageError, Rng, Timeline) knows nothing else and every folder but tensor/
# may use it.
KNOWS = {
    "train": {"nn", "optim", "data", "distributed", "io", "keras", "base"},
    "distributed": {"tensor", "optim", "io", "base"},
    "launch": {"base"},  # nothing of tensors
    "nn": {"tensor", "kernels", "base"},
    "optim": {"tensor", "kernels", "base"},
    "data": {"tensor", "base"},
    "keras": {"nn", "io", "base"},
    "io": {"tensor", "base"},
    "kernels": {"tensor", "base"},
    "tensor": set(),
    "base": set(),
}

# Includes that break the table today, each with why it stands; a new one
# fails. Keep this list short: fix the include, or change the table above
# together with the design.
EXEMPT = {
    # data.hdf5 reads its datasets through io's HDF5 wrapper rather than a
    # second one of its own (io sits below data on the design's page, but
    # data's row names only tensor).
    ("runtime/data/hdf5_set.hpp", "io"),
    # A rank's role from DRUN_PLACEMENT, read through launch's checked
    # parser (launch sits below train on the page, but train's row does not
    # name it).
    ("runtime/train/job.cpp", "launch"),
    # A rerun's resizes from DRUN_RESIZED (drun --min-workers), read through
    # launch's checked parser, as job.cpp reads the placement.
    ("runtime/train/run_fit.cpp", "launch"),
}

SOURCES = (".hpp", ".cpp", ".h", ".cu", ".cuh", ".in")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z_]\w*)/', re.M)


def allowed(folder):
    """The folder itself and everything it knows, directly or through another."""
    seen, todo = {folder}, [folder]
    while todo:
        for known in KNOWS[todo.pop()]:
            if known not in seen:
                seen.add(known)
                todo.append(known)
    return seen


def may_not_include():
    """For each folder of the table, the folders it may not include."""
    return {f: set(KNOWS) - allowed(f) for f in KNOWS}


def main():
    root = sys.argv[1]
    forbidden = may_not_include()
    runtime = os.path.join(root, "runtime")
    unknown = sorted(d for d in os.listdir(runtime)
                     if os.path.isdir(os.path.join(runtime, d)) and d not in KNOWS)
    problems = ["runtime/%s/ is not in the layer table (tests/lint/layer_includes.py)" % d
                for d in unknown]
    files, used = 0, set()
    for folder in sorted(KNOWS):
        for top, _, names in os.walk(os.path.join(runtime, folder)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(top, name)
                rel = os.path.relpath(path, root)
                text = open(path, encoding="utf-8", errors="replace").read()
                files += 1
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    if target not in forbidden[folder]:
                        continue
                    if (rel, target) in EXEMPT:
                        used.add((rel, target))
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append("%s:%d: %s/ includes %s/, which is above it (%s/ may not "
                                    "include %s)" % (rel, line, folder, target, folder,
                                                     ", ".join(sorted(forbidden[folder]))))
    problems += ["exemption no longer needed: %s includes nothing of %s/" % e
                 for e in sorted(EXEMPT - used)]
    for p in problems:
        print(p)
    print("%d files of runtime/ checked, %d problems" % (files, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
