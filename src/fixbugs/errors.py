"""FixBugs' errors: what the user gave us is wrong, said in one line."""

from __future__ import annotations

from agentrt import UserError

__all__ = ["InputError"]


class InputError(UserError):
    """An input (report, repository, log, trace, screenshot) cannot be used as given."""
