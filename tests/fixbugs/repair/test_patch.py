"""Unified diffs from edits, and the old-file lines each hunk touches."""

from fixbugs.repair.patch import diff_hunks, make_diff, replace_lines

SRC = "def f(x):\n    if x > 10 and ok:\n        return 'a > b'  # x > y\n    return x\n"


def test_diff_hunks_of_insertions_deletions_and_rewrites():
    new = replace_lines(SRC, 2, 2, "    if x >= 10:\n        log()\n")
    (h,) = diff_hunks(make_diff("m.py", SRC, new))
    assert (h.start, h.end) == (2, 2)
    ins = SRC.replace("    return x\n", "    x += 1\n    return x\n")
    (h,) = diff_hunks(make_diff("m.py", SRC, ins))
    assert h.end == h.start - 1 == 3  # a pure insertion before old line 4
