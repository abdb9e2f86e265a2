"""One bug's run: the agent that drives it, its context, its progress and its report.

:mod:`.agent` runs the stages (:mod:`fixbugs.stages`) as a dependency graph;
:mod:`.context` is what the run knows, :mod:`.progress` what a person
watching it sees, :mod:`.preflight` the model endpoints checked before any
work, :mod:`.report` and :mod:`.report_schema` what it hands back. Nothing
is re-exported here: import from the module.
"""
