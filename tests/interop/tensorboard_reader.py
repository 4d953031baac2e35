"""Reads TensorBoard event files with TensorBoard's own reader and prints them as JSON.

drun writes event files with its own encoder (runtime/io/event_writer.cpp); the
tests check them with this reader, which nobody here wrote, so a mistake in our
encoder cannot be mirrored by a mistake in the check.

Usage: build/venv/bin/python tests/interop/tensorboard_reader.py DIR [--histograms]

Prints {"run": {"tag": [[step, value], ...]}} with one run per directory under
DIR that holds event files ("." for DIR itself), as TensorBoard groups them.
With --histograms it prints the histograms instead, as
{"run": {"tag": [{"step", "min", "max", "num", "sum", "sum_squares",
"bucket_limit", "bucket"}, ...]}}. Exits non-zero with a message when DIR holds no event files.
"""

import argparse
import json
import os
import sys

from tensorboard.backend.event_processing import event_accumulator


def run_dirs(root):
    """Directories under root (itself included) that hold event files, by run name."""
    runs = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if any("tfevents" in name for name in filenames):
            runs[os.path.relpath(dirpath, root)] = dirpath
    return runs


def histogram(event):
    h = event.histogram_value
    return {"step": event.step, "min": h.min, "max": h.max, "num": h.num, "sum": h.sum,
            "sum_squares": h.sum_squares, "bucket_limit": list(h.bucket_limit),
            "bucket": list(h.bucket)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--histograms", action="store_true",
                        help="print the histograms instead of the scalars")
    args = parser.parse_args()
    if not os.path.isdir(args.dir):
        sys.exit(f"tensorboard_reader: {args.dir} is not a directory")
    runs = run_dirs(args.dir)
    if not runs:
        sys.exit(f"tensorboard_reader: no event files (*tfevents*) under {args.dir}")

    result = {}
    for run, path in runs.items():
        # 0 keeps every event: the default samples scalars down to 10,000.
        acc = event_accumulator.EventAccumulator(
            path, size_guidance={event_accumulator.SCALARS: 0,
                                 event_accumulator.HISTOGRAMS: 0})
        acc.Reload()
        tags = acc.Tags()
        if args.histograms:
            result[run] = {tag: [histogram(h) for h in acc.Histograms(tag)]
                           for tag in tags[event_accumulator.HISTOGRAMS]}
        else:
            result[run] = {tag: [[s.step, s.value] for s in acc.Scalars(tag)]
                           for tag in tags[event_accumulator.SCALARS]}
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
