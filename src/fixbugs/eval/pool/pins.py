"""A pool case's pins: BugsInPy's frozen lists made into ones that install under Python 3.8.

BugsInPy's ``requirements.txt`` is a ``pip freeze`` of whatever environment
its authors used, sometimes UTF-16, often with the project itself as an
editable ``git+`` line and with packages that never install on Linux under
3.8 (``pywin32``, Python-2-only ``SOAPpy``). :func:`clean_pins` keeps the
plain pins and drops the project's own; :func:`installable_pins` asks pip
(a dry run, no dependencies, in a bare 3.8 venv) which pins resolve and
drops each one that does not, naming it, so a case says exactly which of
its authors' pins it runs without. The case venv itself is made the one
way every eval venv is: :func:`fixbugs.pyenv.testenv.ensure_python_env`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.pyenv.testenv import ensure_python_env
from fixbugs.sandbox.hosttools import run_tool

__all__ = ["Pins", "clean_pins", "decode_text", "installable_pins", "pin_name"]

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*(?P<ver>[^\s;#]+)")
_NO_MATCH = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies "
    r"the requirement) (?P<req>[A-Za-z0-9][A-Za-z0-9._\-\[\]=<>!~]*)"
)
_COLLECTING = re.compile(r"^Collecting (?P<req>[A-Za-z0-9][A-Za-z0-9._\-\[\]=<>!~]*)", re.M)
_MAX_DROPS = 12


def decode_text(raw: bytes) -> str:
    """A BugsInPy text file: UTF-16 when it starts with a BOM, else UTF-8."""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return raw.decode("utf-16", errors="replace")
    return raw.decode("utf-8-sig", errors="replace")


def pin_name(pin: str) -> str:
    """The normalized project name of ``name==version`` (PEP 503), or "" for no pin."""
    m = _PIN.match(pin.strip())
    return re.sub(r"[-_.]+", "-", m["name"]).lower() if m else ""


def clean_pins(text: str, project: str) -> tuple[str, ...]:
    """The ``name==version`` pins of a frozen list, sorted, without the project's own.

    Editable and VCS lines (``-e git+…#egg=luigi``) and the project's own pin
    go: the tests run the tree they are given, from its root.
    """
    own = pin_name(f"{project}==0")
    out = {
        line.strip()
        for line in text.splitlines()
        if _PIN.match(line.strip()) and pin_name(line) != own
    }
    return tuple(sorted(out, key=str.lower))


@dataclass(frozen=True, slots=True)
class Pins:
    """What of a case's frozen list installs: ``kept`` pins, ``dropped`` ones with why."""

    kept: tuple[str, ...]
    dropped: tuple[str, ...] = ()  # "pywin32==227: no matching distribution under 3.8"


def _failing_pin(output: str, pins: Sequence[str]) -> str | None:
    """The pin pip's failed dry run stopped at: named as unresolvable, else the last collected."""
    by_name = {pin_name(p): p for p in pins}
    for rx in (_NO_MATCH, _COLLECTING):
        found = [m["req"] for m in rx.finditer(output)]
        if found:
            pin = by_name.get(pin_name(found[-1] if "==" in found[-1] else found[-1] + "==0"))
            if pin is not None:
                return pin
    return None


def installable_pins(python: str, pins: Sequence[str], cache: Path) -> Pins:
    """``pins`` less those pip cannot get for ``python`` on this platform (cached by content).

    Raises :class:`InputError` (one line) when a dry run fails without
    naming a pin, or more than a dozen pins fail.
    """
    digest = hashlib.sha256("\n".join(sorted(pins)).encode()).hexdigest()[:12]
    memo = cache / f"pins-py{python}-{digest}.json"
    if memo.exists():
        data = json.loads(memo.read_text())
        return Pins(tuple(data["kept"]), tuple(data["dropped"]))
    bare = ensure_python_env(python, (), (), cache_dir=cache)
    kept, dropped = list(pins), list[str]()
    while kept:
        run = run_tool(
            [
                str(bare / "python"),
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--no-deps",
                "--ignore-installed",
                "--disable-pip-version-check",
                *kept,
            ],
            timeout_s=1800,
        )
        if run.ok:
            break
        said = run.said()
        bad = _failing_pin(said, kept)
        if bad is None or len(dropped) >= _MAX_DROPS:
            last = said.splitlines()[-1:] or ["no output"]
            raise InputError(f"requirements do not install under {python}: {last[0][:160]}")
        why = "no matching distribution" if _NO_MATCH.search(said) else "does not build"
        dropped.append(f"{bad}: {why} under {python}")
        kept.remove(bad)
    out = Pins(tuple(kept), tuple(dropped))
    memo.write_text(json.dumps({"kept": out.kept, "dropped": out.dropped}, indent=1))
    return out
