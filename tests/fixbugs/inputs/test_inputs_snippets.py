"""The report's code as scripts: fenced blocks, ``>>>`` sessions, ``python -c`` lines.

Reports are hostile and odd: no code, shell blocks only, ANSI colours,
huge pasted files, sessions with continuation lines. Nothing here runs a
snippet; the extractor only reads text.
"""

from __future__ import annotations

import ast

from fixbugs.inputs.snippets import MAX_SCRIPT_CHARS, MAX_SNIPPETS, Snippet, extract_snippets


def only(text: str) -> Snippet:
    found = extract_snippets(text)
    assert len(found) == 1, found
    return found[0]


def test_a_python_block_and_the_output_pasted_after_it() -> None:
    s = only(
        "It adds wrong:\n\n```python\nfrom calc import add\nprint(add(2, 2))\n```\n\n"
        "prints\n\n```\n5\n```\n\nbut 2 + 2 is 4.\n"
    )
    assert s == Snippet("from calc import add\nprint(add(2, 2))\n", "block", None, "", "5")
    assert s.expects == "prints '5'"


def test_a_python_block_and_the_traceback_pasted_after_it() -> None:
    s = only(
        "```py\nimport calc\ncalc.div(1, 0)\n```\n\n```\nTraceback (most recent call last):\n"
        '  File "x.py", line 2, in <module>\nZeroDivisionError: division by zero\n```\n'
    )
    assert (s.kind, s.raises, s.message, s.output) == (
        "block",
        "ZeroDivisionError",
        "division by zero",
        None,
    )


def test_a_session_becomes_a_script_that_shows_values_as_the_repl_does() -> None:
    s = only("```\n>>> from calc import add\n>>> add(1,\n...     2)\n7\n>>> x = 1\n```\n")
    assert s.kind == "session" and s.output == "7" and s.raises is None
    tree = ast.parse(s.source)  # a script, not a session: it parses
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert any(ast.unparse(c.func) == "_fixbugs_sys.displayhook" for c in calls)
    assert "x = 1" in s.source and ">>>" not in s.source


def test_an_indented_session_with_a_traceback() -> None:
    s = only(
        "```pycon\n    >>> import calc\n    >>> calc.get({}, 'k')\n"
        '    Traceback (most recent call last):\n      File "<stdin>", line 1\n'
        "    KeyError: 'k'\n```\n"
    )
    assert (s.kind, s.raises, s.message) == ("session", "KeyError", "'k'")


def test_python_c_lines_in_a_shell_block_with_their_output() -> None:
    found = extract_snippets(
        "```console\n$ python3 -c 'import calc; print(calc.name())'\nwrong\n$ ls\n"
        'a b\n$ python -c "import calc; calc.boom()"\n```\n'
    )
    assert [(s.kind, s.source, s.output) for s in found] == [
        ("command", "import calc; print(calc.name())\n", "wrong"),
        ("command", "import calc; calc.boom()\n", None),
    ]


def test_an_inline_python_c_and_the_exception_named_in_prose() -> None:
    s = only("Running `python -c 'import calc; calc.boom()'` raises a KeyError: so sad.\n")
    assert (s.kind, s.raises, s.message) == ("command", "KeyError", "")


def test_no_code_shell_blocks_tracebacks_and_outputs_are_no_snippet() -> None:
    assert extract_snippets("") == ()
    assert extract_snippets("It crashes when I click save. Please fix!\n") == ()
    assert extract_snippets("```sh\n$ git push\nfatal: no upstream\n```\n") == ()
    assert extract_snippets("```\nTraceback (most recent call last):\nKeyError: 'a'\n```\n") == ()
    assert extract_snippets("```python\nTrue\n```\n") == ()  # does nothing
    assert extract_snippets("```python\ndef f(:\n```\n") == ()  # does not parse
    assert extract_snippets("```\nx = compute()\n```\n") == ()  # untagged, no import
    assert extract_snippets("```python\nimport a\n") == ()  # the fence never closes


def test_ansi_colours_are_removed_before_reading() -> None:
    s = only("```python\n\x1b[1;32mimport calc\x1b[0m\ncalc.run()\n```\n")
    assert s.source == "import calc\ncalc.run()\n"


def test_a_huge_block_is_no_snippet_and_the_count_is_capped() -> None:
    huge = "import calc\n" + "calc.run()\n" * (MAX_SCRIPT_CHARS // 10)
    assert extract_snippets(f"```python\n{huge}```\n") == ()
    many = "".join(f"```python\nimport calc\ncalc.f({i})\n```\n" for i in range(20))
    assert len(extract_snippets(many)) == MAX_SNIPPETS
    assert len(extract_snippets("```python\nimport a\n```\n" * 3)) == 1  # the same, once


def test_a_python_c_with_unbalanced_quotes_is_skipped() -> None:
    assert extract_snippets("```\n$ python -c 'import calc\n```\n") == ()


def test_what_the_report_expects_instead() -> None:
    s = only("```python\nimport calc\nprint(calc.f())\n```\n```\n5\n```\nI expected `4` here.\n")
    assert (s.output, s.expected) == ("5", "4")
    s = only("```python\nimport calc\nprint(calc.f())\n```\nIt should print `foo`, not `bar`.\n")
    assert s.expected == "foo"
    assert only("```python\nimport calc\ncalc.f()\n```\nThe `f` is wrong.\n").expected is None


def test_a_session_shows_what_its_last_printing_statement_printed() -> None:
    # the version printed first sets the scene; the last value is the one called wrong
    s = only(
        "```\n>>> import calc\n>>> calc.__version__\nu'1.0.3'\n>>> calc.url('a')\n"
        "'http://a.com/test_form'\n```\n"
    )
    assert (s.output, s.raises) == ("'http://a.com/test_form'", None)


def test_a_session_shows_its_first_traceback_over_later_values() -> None:
    s = only(
        "```\n>>> import calc\n>>> calc.get({}, 'k')\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1\nKeyError: \'k\'\n>>> calc.get({"k": 1}, "k")\n1\n```\n'
    )
    assert (s.raises, s.message, s.output) == ("KeyError", "'k'", None)
