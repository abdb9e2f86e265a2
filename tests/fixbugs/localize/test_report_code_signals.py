"""The report-code signals on small hand-made trees: snippets, dotted names, paths, tracebacks."""

from __future__ import annotations

from fixbugs.index import as_index, dotted_target, resolve_name
from fixbugs.localize.locate import crash_evidence
from fixbugs.localize.names import name_evidence, path_evidence
from fixbugs.localize.rank import rank_files
from fixbugs.localize.regions import suspicious_regions
from fixbugs.localize.report_code import report_statements
from fixbugs.localize.snippet_calls import call_evidence
from fixbugs.localize.traceback import parse_failure

BASE = (
    "class Base:\n"  # 1
    "    def helper(self):\n"  # 2
    "        return 1\n"  # 3
    "\n"  # 4
    "    def method(self, x):\n"  # 5
    "        return x + 1\n"  # 6
)
TREE = {
    "a/__init__.py": "from .b import *\n",
    "a/b/__init__.py": "from a.b.thing import Thing\n__all__ = ['Thing']\n",
    "a/b/thing.py": (
        "from a.b.base import Base\n\n\nclass Thing(Base):\n    def __init__(self, x):\n"
        "        self.x = x\n\n    def other(self):\n        return 2\n"
    ),
    "a/b/base.py": BASE,
    "a/c.py": "def method(y):\n    return y\n\n\ndef run():\n    raise ValueError('bad things')\n",
    "tests/test_thing.py": "from a.b import Thing\n\ndef test_it():\n    Thing(1).method(2)\n",
}


def _index():
    return as_index(TREE)


def test_reexports_resolve_to_the_defining_file_through_star_and_relative_imports():
    index = _index()
    found = resolve_name(index, "a", "Thing")
    assert found is not None and found.path == "a/b/thing.py" and found.symbol is not None
    meth = dotted_target(index, "a.b.Thing.method")
    assert meth is not None and meth.path == "a/b/base.py"  # inherited from Base
    assert meth.symbol is not None and (meth.symbol.start, meth.symbol.end) == (5, 6)


def test_snippet_call_leads_to_the_base_class_that_defines_the_method():
    report = "Bug\n```python\nfrom a.b import Thing\nThing(3).method(4)\n```\n"
    ev = call_evidence(_index(), report)
    ranked = rank_files(ev)
    assert ranked[0].path == "a/b/base.py"
    assert any(e.lines == ((5, 6),) for e in ev if e.path == "a/b/base.py")
    # the constructor's class is a weaker suspect; the test file is none
    assert {r.path for r in ranked} == {"a/b/base.py", "a/b/thing.py"}


def test_an_assigned_instance_keeps_its_class_and_sessions_lose_their_prompts():
    report = (
        "```\n>>> import a\n>>> t = a.Thing(1)\n>>> t.method(2)\n3\n"
        "In [2]: t.other()\nOut[2]: 2\n```\n"
    )
    assert len(report_statements(report)) == 4
    ranked = rank_files(call_evidence(_index(), report))
    assert [r.path for r in ranked][:2] == ["a/b/base.py", "a/b/thing.py"]


def test_method_of_unknown_owner_is_shared_by_its_definitions():
    ev = call_evidence(_index(), "```python\nobj = make()\nobj.helper()\n```\n")
    assert [(e.path, e.strength) for e in ev if not e.lines] == [("a/b/base.py", 0.5)]


def test_class_method_mention_in_prose_is_that_method():
    ev = name_evidence(_index(), "The code for this is in `Thing.method`, it adds one.")
    spans = [(e.path, e.lines) for e in ev if e.lines]
    assert spans == [("a/b/base.py", ((5, 6),))]


def test_a_repository_path_in_the_report_names_that_file():
    files = TREE.keys()
    ev = path_evidence("see a/b/thing.py line 5, and tests/test_thing.py", files)
    assert [e.path for e in ev] == ["a/b/thing.py"]  # test files are no suspects
    warned = path_evidence("a/b/thing.py:5: DeprecationWarning", files, located={"a/b/thing.py"})
    assert warned == []  # a warning's location is the warning signal's, not a named path
    installed = path_evidence("/usr/lib/python3/site-packages/a/b/base.py", files)
    assert [e.path for e in installed] == ["a/b/base.py"]


def test_ipython_traceback_from_an_installed_copy_maps_to_the_repository():
    report = (
        "ValueError                Traceback (most recent call last)\n"
        "<ipython-input-2-abc> in <module>\n----> 1 run()\n\n"
        "~/conda/lib/python3.8/site-packages/a/c.py in run()\n"
        "      5 def run():\n----> 6     raise ValueError('bad things')\n\n"
        "ValueError: bad things\n"
    )
    failure = parse_failure(report, TREE.keys())
    frames = failure.project_frames()
    assert [(f.path, f.line, f.function) for f in frames] == [("a/c.py", 6, "run")]
    new = "File ~/env/lib/python3.10/site-packages/a/b/base.py:6, in Base.method(self, x)\n"
    assert [(f.path, f.line) for f in parse_failure(new, TREE.keys()).project_frames()] == [
        ("a/b/base.py", 6)
    ]


def test_regions_name_the_called_function():
    report = "```python\nfrom a.b import Thing\nThing(3).method(4)\n```\n"
    ranked = rank_files(call_evidence(_index(), report))
    regions = suspicious_regions(TREE, ranked, report=report)
    assert (regions[0].path, regions[0].function, regions[0].start, regions[0].end) == (
        "a/b/base.py",
        "Base.method",
        5,
        6,
    )


def test_a_frame_of_another_version_moves_to_the_line_it_quotes():
    from fixbugs.localize.traceback import anchor_frames

    report = (
        'Traceback (most recent call last):\n  File "/site-packages/a/c.py", line 9, in run\n'
        "    raise ValueError('bad things')\nValueError: bad things\n"
    )
    failure = anchor_frames(parse_failure(report, TREE.keys()), TREE)
    assert [(f.path, f.line) for f in failure.project_frames()] == [("a/c.py", 6)]


def test_the_callees_of_a_used_function_are_its_neighbourhood():
    from fixbugs.localize.neighbourhood import neighbour_evidence

    tree = {
        **TREE,
        "a/d.py": (
            "from a.c import method\n\n\nclass K:\n    def go(self):\n"
            "        return self.step() + method(1)\n\n    def step(self):\n        return 0\n"
        ),
    }
    index = as_index(tree)
    seeds = call_evidence(index, "```python\nfrom a.d import K\nK().go()\n```\n")
    near = {(e.path, e.lines) for e in neighbour_evidence(index, seeds)}
    assert near == {("a/d.py", ((8, 9),)), ("a/c.py", ((1, 2),))}


def test_the_reproductions_crash_ranks_the_file_it_failed_in():
    # a snippet's run: its own frame is a scratch file, no file of the repository
    output = (
        "Traceback (most recent call last):\n"
        '  File ".fixbugs-snippet-x/snippet.py", line 2, in <module>\n'
        "    a.c.run()\n"
        '  File "a/c.py", line 6, in run\n'
        "    raise ValueError('bad things')\n"
        "ValueError: bad things\n"
    )
    ev = crash_evidence(output, TREE)
    assert [(e.path, e.kind, e.lines) for e in ev] == [("a/c.py", "traceback", ((6, 6),))]
    assert rank_files(ev)[0].path == "a/c.py"
    assert crash_evidence("all good\n", TREE) == []
