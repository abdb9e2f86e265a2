"""An unusable bug report or trace file is refused with one line that says why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import load_report, load_traces

Loader = Callable[[Path], object]


@pytest.mark.parametrize(
    ("loader", "name", "content", "message"),
    [
        (load_report, "report.json", b"", "is empty"),
        (load_report, "report.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "is binary"),
        (load_report, "report.json", b'{"name": "not an issue"}', "without an issue 'title'"),
        (load_traces, "t.json", b"", "is empty"),
        (load_traces, "t.json", b"\x0a\x00\x12\x00", "is binary"),
        (load_traces, "t.json", b'{"spans": []}', "no 'resourceSpans'"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_an_unusable_file_is_a_one_line_error(
    tmp_path: Path, loader: Loader, name: str, content: bytes, message: str
) -> None:
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        loader(p)
    assert "\n" not in str(info.value)
