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
