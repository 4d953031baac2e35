#!/usr/bin/env python3
"""Where a step's time goes, by kind of work, from a `drun --timeline` trace.

    python3 tools/bench/layer_profile.py TRACE.json [--title TEXT] [--by-layer]

Sums the complete ("X") events of rank 0's main thread per phase and layer
kind (a layer's name without its `_N` suffix: `backward conv2d` is every
convolution's input and filter gradient together), divides by the number of
steps and prints a Markdown table: ms per step and share of the step. Input
work on the prefetch thread is shown apart, since it overlaps the step.
--by-layer keeps each layer apart (`backward conv2d_7`): which of a kind's
layers scale worst over threads.
"""
import argparse
import collections
import json
import re
import sys


def kind(name):
    return re.sub(r'_\d+$', '', name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('trace')
    ap.add_argument('--title', default='')
    ap.add_argument('--by-layer', action='store_true', help='one row per layer, not per kind')
    args = ap.parse_args()
    with open(args.trace) as f:
        doc = json.load(f)
    events = doc['traceEvents'] if isinstance(doc, dict) else doc
    main_tid = next((e['tid'] for e in events
                     if e.get('ph') == 'M' and e.get('name') == 'thread_name'
                     and e.get('pid') == 0 and e['args'].get('name') == 'main'), 1)
    steps = [e for e in events if e.get('ph') == 'X' and e.get('cat') == 'step' and e.get('pid') == 0]
    if not steps:
        sys.exit(f'layer_profile: {args.trace} has no step events')
    step_us = sum(e['dur'] for e in steps) / len(steps)
    total = collections.Counter()
    background = collections.Counter()
    for e in events:
        if e.get('ph') != 'X' or e.get('pid') != 0 or e.get('cat') == 'step':
            continue
        key = e['name'] if args.by_layer else kind(e['name'])
        (total if e.get('tid') == main_tid else background)[key] += e['dur']
    title = args.title or args.trace
    print(f'{title}: {len(steps)} steps, {step_us / 1000:.2f} ms per step\n')
    print('| work | ms per step | share of step |')
    print('| --- | --- | --- |')
    for key, us in total.most_common():
        print(f'| {key} | {us / len(steps) / 1000:.2f} | {100 * us / len(steps) / step_us:.1f} % |')
    accounted = sum(total.values()) / len(steps)
    print(f'| (not in a span) | {(step_us - accounted) / 1000:.2f} | {100 * (1 - accounted / step_us):.1f} % |')
    for key, us in background.most_common():
        print(f'| {key} (prefetch thread, overlaps) | {us / len(steps) / 1000:.2f} | - |')


if __name__ == '__main__':
    main()
