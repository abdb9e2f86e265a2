"""Stepwise repair: a failure that moved forward, the queue it joins, the edits built on it."""

from __future__ import annotations

import textwrap

from test_candidate_runs import FAIL, PASS, Res, cand, harness, validate

from fixbugs.repair.followup import Stepwise
from fixbugs.repair.ranking import RepairCandidate, to_candidate
from fixbugs.repair.schedule import CandidateQueue, FollowUps
from fixbugs.repair.source import Edit
from fixbugs.repair.stepping import FailurePoint, progress

TEST = "test/test_m.py::T::test_keys"


def run_output(test_line: int, crash: str, exc: str, *, failed: tuple[str, ...] = (TEST,)) -> str:
    """pytest's long form of one failing test stopped at ``test_line``, crashed at ``crash``."""
    return (
        "    def test_keys(self):\n"
        ">       check()\n\n"
        f"test/test_m.py:{test_line}:\x20\n"
        "_ _ _ _ _ _ _ _ _ _\n"
        f">   raise {exc}\nE   {exc}: boom\n\n"
        f"{crash}: {exc}\n"
        "=========================== short test summary info ============================\n"
        + "".join(f"FAILED {t} - {exc}: boom\n" for t in failed)
    )


def test_a_later_test_line_or_fewer_failing_tests_is_strong_progress():
    before = FailurePoint.parse(run_output(12, "pkg/m.py:30", "ValueError"))
    assert before.test_line == ("test/test_m.py", 12) and before.crash == ("pkg/m.py", 30)
    assert before.exception == "ValueError" and before.failed == {TEST}
    later = FailurePoint.parse(run_output(13, "pkg/m.py:30", "ValueError"))
    assert progress(before, later) == "strong"
    assert progress(later, before) is None  # it stopped earlier: a step back
    two = FailurePoint.parse(run_output(12, "pkg/m.py:30", "ValueError", failed=(TEST, "t2")))
    assert progress(two, before) == "strong"
    assert progress(before, two) is None  # a test that passed before fails now


def test_another_crash_is_weak_progress_unless_the_edit_broke_the_code():
    before = FailurePoint.parse(run_output(12, "pkg/m.py:30", "ValueError"))
    moved = FailurePoint.parse(run_output(12, "pkg/m.py:21", "KeyError"))
    assert progress(before, moved) == "weak"
    assert progress(before, before) is None
    for broken in ("NameError", "TypeError", "UnboundLocalError"):
        assert progress(before, FailurePoint.parse(run_output(12, "pkg/m.py:21", broken))) is None
    # a dotted exception name (``pkg.utils.ExtractorError``) is read by its class
    dotted = FailurePoint.parse("E   pkg.utils.ExtractorError: no\n")
    assert dotted.exception == "ExtractorError"


def test_urgent_follow_ups_go_first_and_others_between_the_waiting_candidates():
    q = CandidateQueue(["a", "b", "c", "d"], ident=str)
    assert next(q) == (0, "a")
    q.add(["x", "y"], urgent=True)
    assert [next(q) for _ in range(3)] == [(1, "x"), (2, "y"), (3, "b")]
    q.add(["p", "q"], urgent=False)
    assert list(q) == [(4, "c"), (5, "p"), (6, "d"), (7, "q")]
    assert len(q) == 0 and q.taken == 8


CODE = textwrap.dedent(
    """\
    import re


    def call(expr, local):
        m = re.match(r'^(?P<f>[a-z]+)\\((?P<args>[a-z,]+)\\)$', expr)
        if m:
            args = [local[v] for v in m.group('args').split(',')]
            return m.group('f'), args
        raise ValueError(expr)
    """
)
SEED_TEXT = CODE.replace("[a-z,]+", "[a-z,]*")
KEYERROR = (
    "    def test_call(self):\n>       call('f()', {})\n\n"
    "test/test_m.py:12:\x20\n_ _ _ _ _\n"
    "pkg/m.py:7: in call\n    args = [local[v] for v in m.group('args').split(',')]\n"
    "_ _ _ _ _\n\n>   args = [local[v] for v in m.group('args').split(',')]\n"
    "E   KeyError: ''\n\npkg/m.py:7: KeyError\n"
    f"FAILED {TEST} - KeyError: ''\n"
)


def seed() -> RepairCandidate:
    edit = Edit("pkg/m.py", 5, 5, SEED_TEXT, "regex", "`]+` -> `]*`")
    return to_candidate(0, edit, CODE, 1.0, frozenset())


def stepwise(**kw: object) -> Stepwise:
    texts = {"pkg/m.py": CODE}
    return Stepwise(
        texts.get,
        run_output(12, "pkg/m.py:9", "ValueError"),
        listed=texts.keys(),
        first_id=100,
        **kw,  # type: ignore[arg-type]
    )


def test_follow_ups_build_the_next_edit_on_the_seed_where_its_new_failure_is():
    more = stepwise()(seed(), KEYERROR)
    assert more is not None and not more.urgent  # another crash, the same test line: weak
    steps = more.candidates
    assert [c.id for c in steps] == list(range(100, 100 + len(steps)))
    pairs = [c for c in steps if c.template == "stepwise"]
    assert pairs and all(c.why.startswith("`]+` -> `]*`; then ") for c in pairs)
    # each pair is one diff of the pristine file holding both edits
    guard = "if m.group('args') else []"
    both = [c for c in pairs if "[a-z,]*" in c.diff and guard in c.diff]
    assert both and pairs.index(both[0]) == 0  # the empty string the KeyError names comes first
    # the second edit alone (it touches other lines than the seed) goes just before it
    alone = steps[steps.index(both[0]) - 1]
    assert alone.template == "empty_split" and guard in alone.diff and "[a-z,]*" not in alone.diff
    assert alone.new_text == CODE.replace(
        "m.group('args').split(',')]", "(m.group('args').split(',') if m.group('args') else [])]"
    )
    assert (alone.start, alone.end) == (7, 7)  # the pristine file's own line
    # no follow-up of a run that did not move, nor beyond the chain's length
    assert stepwise()(seed(), run_output(12, "pkg/m.py:9", "ValueError")) is None
    short = stepwise(max_depth=1)
    assert short(seed(), KEYERROR) is None


async def test_the_validator_runs_the_follow_ups_of_a_seed_and_validates_one():
    step = cand(7, "both")
    asked: list[int] = []

    def refine(c: RepairCandidate, out: str) -> FollowUps | None:
        asked.append(c.id)
        return FollowUps((step,), urgent=True) if c.diff == "first" else None

    def behaviour(diff: str, cmd: str) -> Res:
        return Res(0, PASS) if diff == "both" else Res(1, FAIL)

    _boxes, make_fork, run = harness(behaviour)
    cands = [cand(0, "first"), cand(1, "other"), cand(2, "third")]
    out = await validate(cands, make_fork, run, refine=refine)
    assert [c.id for c in out.validated] == [7] and out.added == [step]
    assert asked == [0]  # the follow-up ran next, before candidate 1, and ended the search
    assert 1 not in out.outcomes or out.outcomes[1].status == "skipped"


def test_a_second_edit_alone_lands_on_the_pristine_lines_it_meant():
    from fixbugs.repair.followup import _alone

    pristine = "a\nb\nc\nd\n"
    seed_text = "a\nguard\nexit\nb\nc\nd\n"  # the seed added two lines after line 1
    assert _alone(pristine, seed_text, seed_text.replace("c\n", "C\n")) == ("a\nb\nC\nd\n", 3, 3)
    assert _alone(pristine, "a\nb\nc\nD\n", "A\nb\nc\nD\n") == ("A\nb\nc\nd\n", 1, 1)
    # a change of the lines the seed wrote is no edit of its own
    assert _alone(pristine, seed_text, seed_text.replace("exit", "return")) is None


def test_a_second_edit_alone_is_described_on_the_pristine_file():
    code = "def f(command):\n    parts = command.split()\n    return parts[1] == 'x'\n"
    guard = "    if command is None:\n        return None\n"
    seed_text = code.replace("    parts", guard + "    parts")
    first = to_candidate(
        0, Edit("pkg/m.py", 2, 2, seed_text, "guard", "None check"), code, 1.0, frozenset()
    )
    crash = (
        "test/test_m.py:12:\x20\n_ _ _\n>   return parts[1] == 'x'\n"
        "E   IndexError: list index out of range\n\npkg/m.py:5: IndexError\n"
        f"FAILED {TEST} - IndexError\n"
    )
    texts = {"pkg/m.py": code}
    more = Stepwise(
        texts.get, run_output(12, "pkg/m.py:2", "AttributeError"), listed=texts, first_id=10
    )(first, crash)
    assert more is not None
    solos = [c for c in more.candidates if c.template != "stepwise" and "index-bounds" in c.why]
    # the guard goes before line 3 of the user's file (line 5 of the seed's text)
    assert solos and all("line 3" in c.why and c.start == 3 for c in solos)


def test_a_candidate_queued_twice_is_taken_once_at_its_earliest_place():
    q = CandidateQueue(["a", "b", "c", "d"], ident=str)
    assert next(q) == (0, "a")
    q.add(["c", "x"], urgent=True)  # "c" named again, ahead of its first place
    q.add(["a"], urgent=True)  # already taken: never again
    assert len(q) == 4
    assert list(q) == [(1, "c"), (2, "x"), (3, "b"), (4, "d")]
    assert q.taken == 5


def test_a_second_edit_two_seeds_share_is_one_candidate_named_before_each_pair():
    code = "def f(command):\n    parts = command.split()\n    return parts[1] == 'x'\n"
    texts = {"pkg/m.py": code}
    steps = Stepwise(
        texts.get, run_output(12, "pkg/m.py:2", "AttributeError"), listed=texts, first_id=10
    )
    guard = "    if command is None:\n        return None\n"
    first = to_candidate(
        0,
        Edit("pkg/m.py", 2, 2, code.replace("    parts", guard + "    parts"), "guard", "None"),
        code,
        1.0,
        frozenset(),
    )
    other = to_candidate(
        1,
        Edit("pkg/m.py", 3, 3, code.replace("'x'", "'y'"), "literal", "`'x'` -> `'y'`"),
        code,
        1.0,
        frozenset(),
    )

    def crash(line: int) -> str:
        return (
            "test/test_m.py:12:\x20\n_ _ _\n>   return parts[1] == 'x'\n"
            f"E   IndexError: list index out of range\n\npkg/m.py:{line}: IndexError\n"
            f"FAILED {TEST} - IndexError\n"
        )

    one, two = steps(first, crash(5)), steps(other, crash(3))
    assert one is not None and two is not None

    def solos(more: FollowUps) -> dict[str, RepairCandidate]:
        return {c.new_text: c for c in more.candidates if c.template != "stepwise"}

    shared = solos(one).keys() & solos(two).keys()
    assert shared  # the same index-bounds guard alone, reached from both seeds
    for text in shared:
        solo = solos(one)[text]
        assert solos(two)[text] is solo  # one candidate, one id
        at = two.candidates.index(solo)
        after = two.candidates[at + 1]  # the later seed's pair holding that guard
        assert after.template == "stepwise" and after.why.startswith("`'x'` -> `'y'`; then ")
    ids = [c.id for c in (*one.candidates, *two.candidates) if c.new_text not in shared]
    assert len(ids) == len(set(ids))


async def test_an_urgent_pair_never_runs_ahead_of_its_second_edit_alone():
    solo, weak_pair, urgent_pair = cand(5, "solo"), cand(6, "seed+solo"), cand(7, "other+solo")

    def refine(c: RepairCandidate, out: str) -> FollowUps | None:
        if c.diff == "seed":  # a weak sign: the solo waits between the candidates
            return FollowUps((solo, weak_pair), urgent=False)
        if c.diff == "other":  # a strong one names the same solo again before its pair
            return FollowUps((solo, urgent_pair), urgent=True)
        return None

    ran: list[str] = []

    def behaviour(diff: str, cmd: str) -> Res:
        ran.append(diff)
        return Res(0, PASS) if diff.endswith("solo") else Res(1, FAIL)

    _boxes, make_fork, run = harness(behaviour)
    cands = [cand(0, "seed"), cand(1, "other"), cand(2, "third")]
    out = await validate(cands, make_fork, run, refine=refine)
    assert [c.id for c in out.validated] == [5]  # the one edit, not a pair holding it
    assert ran == ["seed", "other", "solo"]  # each candidate once
    assert [c.id for c in out.added] == [5, 6, 7]
