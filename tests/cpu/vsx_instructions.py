#!/usr/bin/python3
"""The ppc64le build's hot CPU kernels are VSX code: disassembles the drun
library and checks that each convolution kernel of the vsx variant
(kernels/cpu/isa/vsx.cpp) does its multiply-adds with VSX vector FMAs
(xvmaddasp and its kin, 4 floats each), not one float at a time. Prints the
count per kernel for both POWER variants.

Usage: vsx_instructions.py OBJDUMP LIBDRUN.a"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, summary  # noqa: E402

objdump, library = sys.argv[1], sys.argv[2]
# The kernels of kernels_impl.hpp, conv_implicit_impl.hpp and
# conv_winograd_impl.hpp, by the functions
# (entry points and the templates they may not inline) that hold their loops.
KERNELS = {
    "direct forward": r"conv_direct_forward|forward_blocked|forward_scalar",
    "direct filter gradient": r"conv_direct_backward_filter|backward_filter_9taps|backward_filter_any",
    "direct + max pool forward":
        r"conv_direct_max_pool_forward|max_pool_forward_blocked|max_pool_forward_scalar",
    "direct + max pool filter gradient":
        r"conv_direct_max_pool_backward_filter|max_pool_backward_filter_9taps|max_pool_backward_filter_any",
    "implicit forward": r"conv_implicit_forward|implicit_forward_",
    "implicit filter gradient": r"conv_implicit_backward_filter|implicit_filter_",
    "winograd forward": r"conv_winograd_forward|wino_forward_image|wino_gemm",
    "winograd filter gradient": r"conv_winograd_backward_filter|wino_filter_",
}
VECTOR_FMA = re.compile(r"\txvn?m(add|sub)[am]sp\b")

listing = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-C", library],
                         capture_output=True, text=True, check=True).stdout
counts = {}  # (variant, kernel) -> vector FMAs
function = None
for line in listing.splitlines():
    head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if head:
        function = head.group(1)
        continue
    if function is None or not VECTOR_FMA.search(line):
        continue
    variant = re.search(r"drun::kernels::cpu::(\w+)::", function)
    if not variant:
        continue
    for kernel, names in KERNELS.items():
        if re.search(r"::(%s)" % names, function):
            key = (variant.group(1), kernel)
            counts[key] = counts.get(key, 0) + 1

for variant in ("baseline", "vsx"):
    for kernel in KERNELS:
        n = counts.get((variant, kernel), 0)
        line = "%-8s %-34s %4d VSX vector FMAs" % (variant, kernel, n)
        if variant == "vsx":
            check(n > 0, line)
        else:
            print(line)  # for comparison: the baseline's are whatever the compiler made
sys.exit(summary())
