"""The agent's stages, one module per stage, each a ``run_*(inputs, prior, ctx) -> result``.

analysis, file_relevance, reproduce (with SBFL; :mod:`.findtest` finds a
test command when none was given), rootcause, fix and validate. Each stage
reads the bug's inputs and its prior (the results it needs, or the
:class:`~fixbugs.run.record.BugRun` so far), uses the run's services
(:class:`~fixbugs.run.context.RunContext`; the workspace too, as its own
argument, for a stage that runs the repository's code) and returns its own
typed result, mutating nothing shared; the drivers compose the record from
the results, and what they do around the stages is in
:mod:`fixbugs.run.driver` (the agent's floor: no stage imports it). A stage
imports no other stage: what two share is a module of its own here
(:mod:`.sources`, :mod:`.explain`, :mod:`.ranked`, :mod:`.quorum`, ...).
Nothing is re-exported here: import from the stage's module.
"""
