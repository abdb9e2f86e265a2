"""Each parser of untrusted text found superlinear (issue 41) stays linear on its input.

A 60 KB report of unclosed fences held the service's event loop for 48 s:
the parsers run there, and ``re`` holds the GIL for a whole match. Each case
below is a parser and the adversarial text that made it quadratic (or
cubic) before; it is timed at 16 KB and at 8× that, side by side, in CPU
time (best of 3), and the ratio must stay far below the 64 a quadratic
parser shows. ``fixbugs bench hostile`` measures every parser × generator
pair the same way.
"""

from __future__ import annotations

import pytest

from fixbugs.bench.hostile import cpu_seconds
from fixbugs.bench.hostile_text import GENERATORS, PARSERS

SMALL = 16 << 10
LARGE = 8 * SMALL
MAX_RATIO = 20  # linear work is 8×, quadratic 64×: generous for a noisy shared machine

FIXED = [
    ("clean_text", "backspaces"),
    ("extract_snippets", "unclosed fences"),
    ("extract_snippets", "tilde fences"),
    ("extract_snippets", "fence runs"),
    ("report_text", "long identifier"),
    ("report_text", "dotted name"),
    ("parse_failure", "one letter"),
    ("parse_failure", "long identifier"),
    ("static_evidence", "links"),
    ("static_evidence", "EEE...Error"),
    ("read_named_code", "long identifier"),
    ("read_named_code", "dots"),
    ("findtest", "fence runs"),
    ("findtest", "dotted name"),
    ("pytest output", "colons"),
    ("failure hints", "blank lines"),
    ("one_line", "spaces"),
]


@pytest.mark.parametrize(("parser", "generator"), FIXED, ids=[f"{p}-{g}" for p, g in FIXED])
def test_work_grows_linearly(parser: str, generator: str) -> None:
    parse = PARSERS[parser]
    parse("warm up")
    small = cpu_seconds(parse, GENERATORS[generator](SMALL))
    large = cpu_seconds(parse, GENERATORS[generator](LARGE))
    # a floor on the small time: a parser that is nearly free at 16 KB is not judged by
    # its timer's resolution
    ratio = large / max(small, 1e-4)
    assert ratio < MAX_RATIO, f"{parser} on {generator}: 8x the input took {ratio:.0f}x the time"
