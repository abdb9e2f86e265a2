"""A test's id as pytest writes it: ``path::Class::test[params]``, read in one place.

The agent, the eval and the scorer all meet test ids: in a command
(``TestCommand``), in a report's traceback, in a run's verbose lines and
short summary. Each needs a part of one (the file, to know whether it is
the repository's; the function, to know what it tests; the heading pytest
gives its failure section), and a hand split gets the parametrization wrong
once it holds ``::`` or ``[`` (``test_b[a::b]``, ``test_c[x [y]]``).
:class:`TestId` is the one split. A unittest id (``pkg.mod.Class.test``) is
a ``TestId`` with that ``path`` and no names: nothing here reads dots.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TestId"]


@dataclass(frozen=True, slots=True)
class TestId:
    """``path::names…[params]``; ``str(TestId.parse(s)) == s`` for every ``s``."""

    __test__ = False  # not a pytest test class

    path: str  # up to the first "::": the file (pytest), or the whole id
    names: tuple[str, ...] = ()  # the parts after it: class(es), then the function
    params: str | None = None  # inside the last part's brackets: "x y", "a::b"

    @classmethod
    def parse(cls, text: str) -> TestId:
        """The parts of ``text``; the file part holds no ``::``, the parametrization
        starts at the first ``[`` after it and runs to the id's closing ``]``."""
        path, sep, rest = text.partition("::")
        if not sep:
            return cls(text)
        params: str | None = None
        bracket = rest.find("[")
        if bracket >= 0 and rest.endswith("]"):
            rest, params = rest[:bracket], rest[bracket + 1 : -1]
        return cls(path, tuple(rest.split("::")), params)

    def __str__(self) -> str:
        if not self.names:
            return self.path
        return f"{self.path}::{'::'.join(self.names)}{self._brackets}"

    @property
    def _brackets(self) -> str:
        return "" if self.params is None else f"[{self.params}]"

    @property
    def function(self) -> str:
        """The test function's name, without its parametrization ("" for a bare path)."""
        return self.names[-1] if self.names else ""

    @property
    def heading(self) -> str:
        """The name pytest heads its failure section with: ``Class.test[params]``
        (the whole id when it names no test)."""
        if not self.names:
            return self.path
        return ".".join(self.names) + self._brackets

    def within(self, other: TestId) -> bool:
        """This test is ``other``, one of its parametrized cases (``other`` has no
        parameters), or a test inside it (a class, a file)."""
        if self.path != other.path or self.names[: len(other.names)] != other.names:
            return False
        if other.params is None:
            return True
        return self.names == other.names and self.params == other.params
