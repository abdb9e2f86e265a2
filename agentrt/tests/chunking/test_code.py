"""Code chunking: whole files packed; oversized files split at definitions."""

from __future__ import annotations

from agentrt.chunking import chunk_code, definition_starts, split_file
from agentrt.tokens import estimate_tokens


def _fn(name: str, body_lines: int) -> str:
    body = "".join(f"    x{i} = {i} * 2  # filler line\n" for i in range(body_lines))
    return f"def {name}():\n{body}    return 0\n\n"


def test_whole_files_are_packed_under_the_budget() -> None:
    files = {f"f{i}.py": _fn(f"f{i}", 5) for i in range(10)}
    per_file = estimate_tokens(files["f0.py"])
    chunks = chunk_code(files, budget=3 * per_file + 30)
    assert all(c.tokens <= 3 * per_file + 30 for c in chunks)
    assert all(p.whole for c in chunks for p in c.parts)
    assert [p.path for c in chunks for p in c.parts] == list(files)  # order kept, nothing lost
    assert len(chunks) == 4


def test_an_oversized_python_file_splits_at_function_boundaries() -> None:
    text = "import os\n\n" + "".join(_fn(f"g{i}", 20) for i in range(6))
    parts = split_file("big.py", text, budget=300)
    assert len(parts) > 1
    assert all(p.tokens <= 300 for p in parts)
    starts = set(definition_starts("big.py", text))
    lines = text.splitlines()
    for p in parts[1:]:
        assert p.start_line - 1 in starts, lines[p.start_line - 1]
    assert "".join(p.text for p in parts) == text
    chunks = chunk_code({"small.py": "x = 1\n", "big.py": text}, budget=300)
    assert chunks[0].parts[0].whole and chunks[0].parts[0].path == "small.py"


def test_decorators_and_other_languages() -> None:
    py = "a = 1\n@dec\n@dec2\ndef f():\n    pass\nclass C:\n    def m(self):\n        pass\n"
    assert definition_starts("x.py", py) == [1, 5, 6]
    go = "package x\n\nfunc A() {\n}\n\nfunc B() {\n}\n"
    assert definition_starts("x.go", go) == [2, 5]
    ts = "export async function a() {}\nconst b = 1\nclass K {}\n"
    assert definition_starts("x.ts", ts) == [0, 2]


def test_a_single_huge_function_is_split_by_lines_as_a_last_resort() -> None:
    text = _fn("huge", 200)
    parts = split_file("h.py", text, budget=200)
    assert len(parts) > 1 and all(p.tokens <= 200 for p in parts)
    assert "".join(p.text for p in parts) == text
