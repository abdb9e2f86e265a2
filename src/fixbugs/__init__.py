"""FixBugs: an AI debugging agent built on the agentrt runtime.

From a bug report, logs, traces and the repository, it ranks the suspect
files, reproduces the failure with the project's own interpreter in a
sandbox, names a root-cause region, proposes minimal fixes and validates
them (:func:`fixbugs.run.agent.run_bug`); ``fixbugs run``, ``fixbugs eval`` and
``fixbugs serve`` are its entry points (:mod:`fixbugs.cli`).
"""

__all__: list[str] = []
