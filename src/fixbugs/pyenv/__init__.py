"""The Python environment a repository's tests run in, and what their runs mean.

:mod:`.userenv` finds the user's interpreter, :mod:`.repovenv` handles a venv
the repository ships, :mod:`.testenv` caches the eval's venvs,
:mod:`.overlay` adds coverage.py visible only in the sandbox (from the
wheels of :mod:`.coveragewheels`, one per range of Python versions),
:mod:`.testrun` reads test commands, :mod:`.testoutput` (with :mod:`.raised`)
is the one reader of what a test run printed, :mod:`.testid` the one split of
a test id, and :mod:`.testverdict` says whether a run ran the tests at all. Nothing is
re-exported here: import from the module.
"""
