"""The imports a pasted snippet leaves out, answered by the repository (pure; nothing runs)."""

from __future__ import annotations

import ast

from fixbugs.index import as_index
from fixbugs.stages.snippet_names import free_names, with_free_names_imported

TREE = {
    "luigi/__init__.py": "from luigi.task import Task\n",
    "luigi/task.py": "class Task:\n    pass\n",
    "luigi/util.py": "def inherits(*tasks):\n    return lambda c: c\n\n\ndef common():\n    pass\n",
    "luigi/contrib/__init__.py": "",
    "luigi/contrib/util.py": "def common():\n    pass\n",
    "setup.py": "def setup():\n    pass\n",
    "docs/conf.py": "def shown():\n    pass\n",
    "test/helpers.py": "def helper():\n    pass\n",
}


def _imports(source: str) -> tuple[str, ...]:
    return with_free_names_imported(source, as_index(TREE))[1]


def test_a_session_without_imports_gets_the_package_and_the_one_definition() -> None:
    source = "class Foo(luigi.Task): pass\n@inherits(Foo)\nclass Bar(luigi.Task): pass\n"
    new, added = with_free_names_imported(source, as_index(TREE))
    assert added == ("import luigi", "from luigi.util import inherits")
    assert new.endswith(source) and ast.parse(new)


def test_a_name_the_package_exports_is_imported_as_its_users_write_it() -> None:
    assert _imports("Task()\n") == ("from luigi import Task",)


def test_doubtful_bound_and_builtin_names_are_left_as_pasted() -> None:
    assert _imports("common()\n") == ()  # two modules define it
    assert _imports("setup(); shown(); helper()\n") == ()  # the setup script, docs, tests
    assert _imports("import luigi\nx = len([1])\nluigi.Task()\nprint(x)\n") == ()
    assert _imports("def f(inherits):\n    return inherits\nf(1)\n") == ()
    assert _imports("from luigi.util import *\ninherits(1)\n") == ()  # the star may bind it
    assert _imports("this is not python(\n") == ()


def test_the_imports_go_after_a_future_import() -> None:
    new, added = with_free_names_imported(
        "from __future__ import print_function\ninherits(1)\n", as_index(TREE)
    )
    assert added and new.splitlines()[:2] == [
        "from __future__ import print_function",
        "from luigi.util import inherits",
    ]


def test_free_names_in_order_of_first_use() -> None:
    tree = ast.parse("a(b)\nfor i in c: d[i] = a\ntry:\n    pass\nexcept E as e:\n    e\n")
    assert free_names(tree) == ("a", "b", "c", "d", "E")
