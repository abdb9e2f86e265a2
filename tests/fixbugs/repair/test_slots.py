"""Priority slots and suite shards: what lets the likely fix use every core."""

from __future__ import annotations

import asyncio

import pytest

from fixbugs.pyenv.testrun import suite_shards
from fixbugs.repair.slots import PrioritySlots


async def test_a_freed_slot_goes_to_the_best_ranked_waiter_not_the_oldest():
    slots = PrioritySlots(1)
    order: list[int] = []

    async def user(priority: int) -> None:
        async with slots.hold(priority):
            order.append(priority)

    async with slots.hold(5):  # the test holds the only slot
        users = [asyncio.create_task(user(p)) for p in (9, 7, 3)]  # queued in this order
        await asyncio.sleep(0)  # one scheduling step: each user reaches its wait
        assert slots.waiting == 3 and slots.free == 0
    await asyncio.gather(*users)
    assert order == [3, 7, 9]
    assert slots.free == 1


async def test_cancelled_waiters_leave_no_permit_behind():
    slots = PrioritySlots(1)

    async def waiter() -> None:
        async with slots.hold(1):
            raise AssertionError("a cancelled waiter must not run")

    async with slots.hold(0):
        waiters = [asyncio.create_task(waiter()) for _ in range(3)]
        await asyncio.sleep(0)
        assert slots.waiting == 3
    # leaving handed the slot to the first waiter, which is cancelled before it runs
    for w in waiters:
        w.cancel()
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    assert slots.free == 1 and slots.waiting == 0


def test_suite_shards_split_the_folder_by_size_and_refuse_what_pytest_alone_knows():
    files = {
        "tests/test_a.py": "x" * 900,
        "tests/sub/test_b.py": "x" * 500,
        "tests/sub/c_test.py": "x" * 450,
        "tests/helpers.py": "x" * 5000,  # not a test file
        "src/test_elsewhere.py": "x",  # not under the folder
    }
    suite = "python -m pytest -v -p no:cacheprovider tests"
    shards = suite_shards(suite, files, 2)
    assert shards == (
        "python -m pytest -v -p no:cacheprovider tests/test_a.py",
        "python -m pytest -v -p no:cacheprovider tests/sub/c_test.py tests/sub/test_b.py",
    )
    assert suite_shards(suite, files, 1) == ()
    assert suite_shards(suite, {"tests/test_a.py": "x"}, 2) == ()  # one file: nothing to split
    assert suite_shards("python -m unittest discover", files, 2) == ()
    configured = {**files, "setup.cfg": "[tool:pytest]\npython_files = check_*.py\n"}
    assert suite_shards(suite, configured, 2) == ()


@pytest.mark.parametrize("n", [2, 3, 8])
def test_every_test_file_is_in_exactly_one_shard(n):
    files = {f"tests/test_{i}.py": "x" * (i * 37 % 101 + 1) for i in range(11)}
    shards = suite_shards("python -m pytest -v -p no:cacheprovider tests/", files, n)
    assert len(shards) == n
    named = [f for s in shards for f in s.split()[6:]]  # after "python -m pytest -v -p X"
    assert sorted(named) == sorted(files)
