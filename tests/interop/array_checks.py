"""What the array readers' interop tests (numpy_reader_test.py,
hdf5_reader_test.py) share: the check of tests/lua/array_reader.lua's output
for the six examples both tests write (example i's values sum to 15 + 36 i).
Imported after tests/testlib.py is on sys.path, as those tests put it."""
import re

from testlib import check

SUMS = [str(15 + 36 * i) for i in range(6)]


def six_examples(label, rc, out, err):
    """The values, shape (2, 3) and two shards (disjoint, complete)."""
    check(rc == 0 and "examples 6 shape 2x3\n" in out, f"{label}: 6 examples of 2x3 ({err[-300:]})")
    m = re.search(r"^sums (.*)$", out, re.M)
    check(m is not None and m.group(1).split() == SUMS, f"{label}: values ({m and m.group(1)})")
    parts = [(re.search(rf"^shard {i}: (.*)$", out, re.M) or [None, ""])[1].split() for i in (0, 1)]
    check(sorted(parts[0] + parts[1], key=int) == SUMS and not set(parts[0]) & set(parts[1]),
          f"{label}: two shards disjoint and complete ({parts})")
