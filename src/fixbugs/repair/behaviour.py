"""A behavioural diff: what the changed functions do before and after a fix, on passing tests.

A fix that passes every test may still change what the code does where no
test looks (issue 44, item 3): ``'push' in command.script_parts`` →
``'push' in command.output`` passes the rule's tests and makes it fire on
any command whose output says push. The tests that passed before go on
passing, but the changed function answers them differently. So, for the
leading fix, the changed module's tests run twice (the buggy tree, then the
patched one) under a probe that records, per test, what each changed
function returned or which exception left it. A test other than the failing
ones, passed on both trees, whose record differs is a behaviour change that
neither a test nor the report explains (:func:`behaviour_check`).

Only plain scalars are compared by value (``bool``, numbers, ``str``,
``bytes``, ``None``: their exact types, so no repository code runs in the
probe's ``repr``); any other value is recorded as "an object" and not
compared, except with a call that raised. Comparing every value's ``repr``
demoted 4 of the 36 real fixes of ``bugs/dev`` and ``bugs/dev-wide``
(``scripts/gold-behaviour``): a ``set`` where a ``list`` was, ``True``
where a match object was, a class's new ``__repr__``, another ``Future``
class. A third run of the buggy tree, made only when
there is a difference, drops the tests whose record is not stable from run
to run (times, random values, temporary paths).

This is the behaviour of the inputs the project's tests already give; the
issue's varied and property-based inputs are not generated here.

Pure: the probe's text, reading what it printed, comparing. The runs are
:func:`fixbugs.stages.lead.behaviour_gate`'s.
"""

from __future__ import annotations

import ast
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fixbugs.errors import InputError
from fixbugs.inputs.boundedjson import loads as bounded_loads
from fixbugs.inputs.inert import one_line
from fixbugs.repair.changed_ast import parse_module
from fixbugs.repair.verdict import FailedCheck

__all__ = [
    "BehaviourChange",
    "Records",
    "Spans",
    "behaviour_changes",
    "behaviour_check",
    "changed_functions",
    "probe_command",
    "read_records",
    "unstable_tests",
]

MARK = "FIXBUGS-BEHAVIOUR-RECORDS "
MAX_CALLS = 50  # calls recorded per test, per run
MAX_REPR = 200  # characters of one return value's repr
MAX_OUTPUT = 4_000_000  # characters of the probe's JSON line read back
OBJECT = "<object>"  # what the probe records of a value that is not a plain scalar

# path -> (first line, def line, name) of each changed function: the line a code object's
# ``co_firstlineno`` gives lies between them (decorators first)
Spans = dict[str, list[tuple[int, int, str]]]


@dataclass(frozen=True, slots=True)
class BehaviourChange:
    """One test that passed both ways, and the first call whose result changed."""

    test: str
    before: str
    after: str

    def line(self) -> str:
        return f"{self.test}: {self.before} before, {self.after} after"


def changed_functions(
    old: str, new: str
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """The spans of the functions whose code differs: (in ``old``, in ``new``).

    A function is matched by its qualified name. One on one side only (a helper
    the fix adds or removes) is not compared: its calls would be a difference
    in every test that reaches it. Text that does not parse gives ``([], [])``.
    """
    a, b = _functions(old), _functions(new)
    if a is None or b is None:
        return [], []
    changed = {q for q in a.keys() & b.keys() if a[q][1] != b[q][1]}
    return (
        sorted(a[q][0] for q in changed if q in a),
        sorted(b[q][0] for q in changed if q in b),
    )


def _functions(text: str) -> dict[str, tuple[tuple[int, int, str], str]] | None:
    """qualname -> ((first line, def line, name), the node's dump) of each function."""
    tree = parse_module(text)
    if tree is None:
        return None
    out: dict[str, tuple[tuple[int, int, str], str]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + child.name
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out[q] = ((first, child.lineno, child.name), ast.dump(child))
                walk(child, q + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


# The probe: runs pytest in-process with a trace function on the changed functions' code
# only, and prints one marked JSON line: each test's calls' results, and the tests that
# passed. Python 3.6+.
_PROBE = r"""
import json, sys, threading
SPANS, MARK, MAX_CALLS, MAX_REPR, OBJECT = %(args)s
records, current, known = {}, [None], {}
def target(code):
    hit = known.get(code)
    if hit is None:
        name = code.co_filename.replace("\\", "/")
        hit = False
        for path, spans in SPANS.items():
            if name == path or name.endswith("/" + path):
                for lo, hi, fn in spans:
                    if code.co_name == fn and lo <= code.co_firstlineno <= hi:
                        hit = fn
        known[code] = hit
    return hit
def record(text):
    calls = records.setdefault(current[0] or "<collection>", [])
    if len(calls) < MAX_CALLS:
        calls.append(text)
SCALARS = (bool, int, float, complex, str, bytes, type(None))
def shown(value):
    if type(value) in SCALARS:
        try:
            return repr(value)[:MAX_REPR]
        except ValueError:  # an int past the interpreter's digit limit
            return OBJECT
    return OBJECT
def local(fn):
    raised = [None]
    def trace(frame, event, arg):
        if event == "exception":
            raised[0] = arg[0].__name__
        elif event == "line":
            raised[0] = None
        elif event == "return":
            if raised[0] is not None:
                record("%%s raised %%s" %% (fn, raised[0]))
            else:
                record("%%s returned %%s" %% (fn, shown(arg)))
        return trace
    return trace
def calls(frame, event, arg):
    if event == "call":
        fn = target(frame.f_code)
        if fn:
            return local(fn)
    return None
passed, failed = set(), set()
class Probe:
    def pytest_runtest_logstart(self, nodeid, location):
        current[0] = nodeid
    def pytest_runtest_logreport(self, report):
        if report.failed:
            failed.add(report.nodeid)
        elif report.when == "call" and report.passed:
            passed.add(report.nodeid)
import pytest
sys.settrace(calls)
threading.settrace(calls)
code = pytest.main(sys.argv[1:], plugins=[Probe()])
sys.settrace(None)
out = {"calls": records, "passed": sorted(passed - failed)}
sys.stdout.write("\n" + MARK + json.dumps(out) + "\n")
sys.stdout.flush()
sys.exit(int(code))
"""


def probe_command(spans: Spans, test_files: Sequence[str]) -> str:
    """The command that runs ``test_files`` with pytest under the probe of ``spans``."""
    args = repr((spans, MARK, MAX_CALLS, MAX_REPR, OBJECT))
    code = _PROBE % {"args": args}
    files = " ".join(shlex.quote(f) for f in test_files)
    return f"python -c {shlex.quote(code)} -p no:cacheprovider -q {files}"


@dataclass(frozen=True, slots=True)
class Records:
    """What one probe run saw: each test's calls' results, and the tests that passed."""

    calls: Mapping[str, tuple[str, ...]]
    passed: frozenset[str]


def read_records(stdout: str) -> Records | None:
    """What the probe printed; ``None`` when it printed nothing readable.

    The output is the repository's tests' too, so the line is read with bounds and
    checked for shape; a test that prints a line of its own can only change what this
    check says of its own repository.
    """
    at = stdout.rfind("\n" + MARK)
    if at < 0:
        return None
    line = stdout[at + 1 + len(MARK) :].split("\n", 1)[0]
    if len(line) > MAX_OUTPUT:
        return None
    try:
        data = bounded_loads(line, "the behaviour probe's record")
    except (InputError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    calls, passed = data.get("calls"), data.get("passed")
    if not isinstance(calls, dict) or not isinstance(passed, list):
        return None
    out: dict[str, tuple[str, ...]] = {}
    for test, seen in calls.items():
        if isinstance(test, str) and isinstance(seen, list):
            out[test] = tuple(str(c)[: MAX_REPR + 80] for c in seen[:MAX_CALLS])
    return Records(out, frozenset(t for t in passed if isinstance(t, str)))


def behaviour_changes(
    before: Records,
    after: Records,
    failing: Sequence[str],
    unstable: Sequence[str] = (),
) -> list[BehaviourChange]:
    """Tests other than the failing ones, passed both ways, whose changed functions
    answered differently.

    ``unstable``: tests whose record differed between two runs of the buggy tree.
    """
    skip = set(failing) | set(unstable)
    both = before.passed & after.passed & before.calls.keys() & after.calls.keys()
    out: list[BehaviourChange] = []
    for test in sorted(both):
        a, b = before.calls[test], after.calls[test]
        if test in skip or _id_in(test, failing) or _same_calls(a, b):
            continue
        pairs = enumerate(zip(a, b, strict=False))
        i = next((k for k, (x, y) in pairs if not _same(x, y)), min(len(a), len(b)))
        out.append(
            BehaviourChange(
                test,
                a[i] if i < len(a) else f"no call {i + 1}",
                b[i] if i < len(b) else f"no call {i + 1}",
            )
        )
    return out


def _same_calls(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))


def _same(x: str, y: str) -> bool:
    """One call's results agree: equal, or one returned an object, which is not compared
    (its type or ``repr`` may change with a right fix: a ``set`` for a ``list``, a bool
    for a match object, a class's new ``__repr__``), unless the other raised."""
    if x == y:
        return True
    obj = f" returned {OBJECT}"
    return (x.endswith(obj) and " raised " not in y) or (y.endswith(obj) and " raised " not in x)


def _id_in(test: str, failing: Sequence[str]) -> bool:
    """A failing test given as a file or a class names every test under it, and a test
    given without its parameters names each of its parametrized cases."""
    return any(test.startswith((f + "::", f + "[")) for f in failing)


def unstable_tests(first: Records, second: Records) -> list[str]:
    """Tests whose record is not the same in two runs of one tree."""
    a, b = first.calls, second.calls
    return sorted(t for t in a.keys() | b.keys() if a.get(t) != b.get(t))


def behaviour_check(changes: Sequence[BehaviourChange]) -> FailedCheck | None:
    """The failed check of a fix that changes what the code does on tests that passed."""
    if not changes:
        return None
    more = f" (and {len(changes) - 1} more test(s))" if len(changes) > 1 else ""
    # the repository's values: one line, without control characters, bounded
    return FailedCheck("changes_behaviour", one_line(changes[0].line())[:400] + more)
