"""``fixbugs bench …``: FixBugs' own measurements, each side by side in one run.

Every speed claim of the project is a ratio measured here, two ways of doing
the same work in one invocation on one machine: :mod:`.repair` (validation
one candidate at a time and in parallel), :mod:`.steps` (every model step
against the default steps), :mod:`.index_scale` (the first hypothesis as
the repository grows), :mod:`.hostile` (how each parser of untrusted text
grows with its input). The service's and the workers' benchmarks live with
the queue stages they measure (:mod:`fixbugs.queued`). The benchmarks run
the agent; nothing runs them but the command line. Nothing is re-exported
here: import from the module.
"""
