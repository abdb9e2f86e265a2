"""The validation stage's scope rule: a fix touches only the localized code."""

from fixbugs.diffs import Hunk
from fixbugs.stages.validate import out_of_scope


def test_scope_check_rejects_tests_and_far_away_edits():
    regions = [("pkg/a.py", 10, 12)]
    assert out_of_scope([Hunk("pkg/a.py", 11, 11)], regions, 3) == []
    assert out_of_scope([Hunk("pkg/a.py", 14, 15)], regions, 3) == []
    assert "outside" in out_of_scope([Hunk("pkg/a.py", 30, 31)], regions, 3)[0]
    assert "outside" in out_of_scope([Hunk("pkg/b.py", 11, 11)], regions, 3)[0]
    assert "test file" in out_of_scope([Hunk("tests/test_a.py", 1, 1)], regions, 3)[0]


def test_a_test_folder_over_the_bound_is_left_out_and_said_so(monkeypatch):
    from fixbugs.stages import validate

    files = {f"tests/test_{i}.py": "" for i in range(4)} | {"pkg/mod.py": "", "tests/util.py": ""}
    suite = "python -m pytest -v -p no:cacheprovider tests"
    assert validate.bounded_suite(suite, files) == (suite, None)
    assert validate.bounded_suite(None, files) == (None, None)
    monkeypatch.setattr(validate, "SUITE_MAX_TEST_FILES", 3)
    kept, note = validate.bounded_suite(suite, files)
    assert kept is None and note is not None and "(4 test files, over 3)" in note
    # a folder whose test files only pytest knows is run as before
    named = files | {"setup.cfg": "[tool:pytest]\npython_files = check_*.py\n"}
    assert validate.bounded_suite(suite, named) == (suite, None)
