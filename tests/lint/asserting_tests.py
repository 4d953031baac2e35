#!/usr/bin/python3
"""Every GoogleTest case asserts something: its body holds an EXPECT_/ASSERT_
macro (or ADD_FAILURE, FAIL, GTEST_SKIP), or calls a helper of its own file or
of tests/unit/common whose body does. A test that can pass only by not
crashing is reported with its file and name.
Usage: asserting_tests.py SOURCE_ROOT"""
import glob
import os
import re
import sys

ROOT = sys.argv[1]
ASSERTS = re.compile(r"\b(EXPECT_\w+|ASSERT_\w+|ADD_FAILURE|FAIL|GTEST_SKIP)\s*\(")
FUNCTION = re.compile(r"\n[\w:<>,&*\s]+?\b(\w+)\s*\((?:[^;{}]|\{\})*\)\s*(const\s*)?\{")
TEST = re.compile(r"\nTEST(_F|_P)?\((\w+),\s*(\w+)\)\s*\{")


def body_at(text, start):
    """The text of the block whose opening brace ends at `start`."""
    depth, i = 1, start
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start:i]


def asserting_helpers(text, known=frozenset()):
    """Names of functions in `text` (and `known`) that assert, directly or
    through another."""
    bodies = {m.group(1): body_at(text, m.end()) for m in FUNCTION.finditer(text)}
    found = set(known) | {name for name, body in bodies.items() if ASSERTS.search(body)}
    grew = True
    while grew:
        grew = False
        for name, body in bodies.items():
            if name not in found and any(re.search(r"\b%s\s*[(<]" % f, body) for f in found):
                found.add(name)
                grew = True
    return found


common = ""
for path in glob.glob(os.path.join(ROOT, "tests/unit/common/*.hpp")):
    common += open(path).read()
shared_helpers = asserting_helpers(common)

sources = sorted(glob.glob(os.path.join(ROOT, "tests/**/*.cpp"), recursive=True))
cases, silent = 0, []
for path in sources:
    text = open(path).read()
    helpers = asserting_helpers(text, shared_helpers)
    for m in TEST.finditer(text):
        cases += 1
        body = body_at(text, m.end())
        if ASSERTS.search(body) or any(re.search(r"\b%s\s*[(<]" % h, body) for h in helpers):
            continue
        silent.append("%s: %s.%s" % (os.path.relpath(path, ROOT), m.group(2), m.group(3)))

for s in silent:
    print("asserts nothing: " + s)
print("%d test cases in %d files, %d assert nothing" % (cases, len(sources), len(silent)))
sys.exit(1 if silent or cases == 0 else 0)
