"""``fixbugs bench …``: FixBugs' own measurements, each side by side in one run.

Every speed claim of the project is a ratio measured here, two ways of doing
the same work in one invocation on one machine: :mod:`.repair` (validation
one candidate at a time and in parallel), :mod:`.steps` (every model step
against the default steps), :mod:`.index_scale` (the first hypothesis as
the repository grows), :mod:`.hostile` (how each parser of untrusted text
grows with its input), :mod:`.service` (stage queues against whole-bug
workers) and :mod:`.workers` (throughput per count of worker processes on
one queue, its figures in :mod:`.workers_figures`, its command in
:mod:`.workers_cli`). The benchmarks run the agent; nothing runs them but
the command line. Nothing is re-exported here: import from the module.
"""
