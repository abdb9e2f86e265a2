"""Unified diffs from edits, and the old-file lines each hunk touches."""

from fixbugs.diffs import Hunk, diff_hunks, make_diff, replace_lines

SRC = "def f(x):\n    if x > 10 and ok:\n        return 'a > b'  # x > y\n    return x\n"


def test_diff_hunks_of_insertions_deletions_and_rewrites():
    new = replace_lines(SRC, 2, 2, "    if x >= 10:\n        log()\n")
    (h,) = diff_hunks(make_diff("m.py", SRC, new))
    assert (h.start, h.end) == (2, 2)
    ins = SRC.replace("    return x\n", "    x += 1\n    return x\n")
    (h,) = diff_hunks(make_diff("m.py", SRC, ins))
    assert h.end == h.start - 1 == 3  # a pure insertion before old line 4


def _full_diff(path: str, old: str, new: str) -> str:
    import difflib

    out = []
    for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def test_a_windowed_diff_is_the_whole_file_diff():
    # make_diff diffs only the changed window (with its context): the same diff as
    # difflib over the whole file, at the file's own line numbers
    import random

    rng = random.Random(3)
    base = [f"line {i} = {i % 7}\n" for i in range(240)]  # under difflib's autojunk size
    for _ in range(200):
        lines = list(base)
        for _edit in range(rng.choice([1, 1, 2])):
            i = rng.randrange(len(lines))
            op = rng.choice(["change", "insert", "delete"])
            if op == "change":
                lines[i] = "changed\n"
            elif op == "insert":
                lines.insert(i, "new\n")
            elif len(lines) > 1:
                del lines[i]
        old, new = "".join(base), "".join(lines)
        if rng.random() < 0.2:
            new = new.rstrip("\n")
        assert make_diff("m.py", old, new) == _full_diff("m.py", old, new)


def test_a_hunk_is_within_or_touches_a_line_range():
    edit = Hunk("m.py", 10, 12)
    assert edit.within("m.py", 8, 12) and not edit.within("m.py", 11, 20)
    assert edit.within("m.py", 11, 20, slack=1)
    assert edit.touches("m.py", 12, 20) and not edit.touches("m.py", 13, 20)
    assert edit.touches("m.py", 14, 20, slack=2) and not edit.touches("other.py", 10, 12)
    # a pure insertion between lines 20 and 21 sits beside both
    insertion = Hunk("m.py", 21, 20)
    assert insertion.touches("m.py", 15, 20) and insertion.touches("m.py", 21, 30)
    assert not insertion.touches("m.py", 22, 30)
    assert insertion.within("m.py", 20, 21) and not insertion.within("m.py", 15, 20)


def test_a_diff_of_repeated_lines_keeps_its_context_and_applies_with_git(tmp_path):
    import subprocess

    head = [f"line {i}\n" for i in range(10)]
    tail = ["    sel\n", "    cur\n"] + [f"end {i}\n" for i in range(10)]
    old = [
        *head,
        "elif m and s in L:\n", "    r\n", "    b\n",
        "elif c and s == ',':\n", "    r\n", "    b\n",
        "elif s == ',':\n",
        *tail,
    ]  # fmt: skip
    # two operands dropped: the new text repeats `elif s == ','` and its body
    new = [
        *head,
        "elif s in L:\n", "    r\n", "    b\n",
        "elif s == ',':\n", "    r\n", "    b\n",
        "elif s == ',':\n",
        *tail,
    ]  # fmt: skip
    diff = make_diff("m.py", "".join(old), "".join(new))
    (tmp_path / "m.py").write_text("".join(old))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=diff, text=True)
    assert done.returncode == 0, diff
    assert (tmp_path / "m.py").read_text() == "".join(new)


def test_headers_are_read_in_one_place_and_a_moved_hunk_keeps_its_form():
    from fixbugs.diffs import file_header, hunk_header

    assert file_header("--- a/pkg/x.py\t2020-01-01 00:00\n") == "pkg/x.py"
    assert file_header("+++ b/pkg/x.py") == "pkg/x.py"
    assert file_header("+++ /dev/null") == "/dev/null"
    assert file_header("-- a/pkg/x.py") is None
    head = hunk_header("@@ -7 +7,2 @@ def f():\n")
    assert head is not None
    assert (head.old_start, head.old_count, head.new_start, head.new_count) == (7, 1, 7, 2)
    assert head.moved(10) == "@@ -17 +17,2 @@ def f():"
    assert hunk_header("@@ bad @@") is None


def test_line_counts_skip_headers_and_count_lines_that_look_like_them():
    from fixbugs.diffs import changed_line_counts, diff_files, touched_files

    # a removed line "-- x" reads "--- x" in the diff: inside a hunk it is a line
    diff = (
        "--- a/a.sql\n+++ b/a.sql\n@@ -1,2 +1,2 @@\n--- x\n+-- y\n keep\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n\\ No newline at end of file\n"
    )
    assert changed_line_counts(diff) == (2, 1)
    assert diff_files(diff) == ["a.sql", "new.py"]
    assert touched_files("--- a/old.py\n+++ b/new.py\n") == ("old.py", "new.py")
