"""FixBugs: an AI debugging agent built on the agentrt runtime.

The agent itself (evidence, reproduction, root cause, minimal fix, proof)
arrives with its own issue; this package holds its entry point so far.
"""

__all__: list[str] = []
