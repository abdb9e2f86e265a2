"""The error hierarchy.

Two families matter to callers. :class:`UserError` subclasses describe
something the user can fix (a bad config file, an unknown model, an endpoint
that is not running); the CLI prints their message as one line and exits
non-zero, never a traceback. :class:`ProviderError` describes what a model
endpoint answered; it carries the facts a retry layer needs (status,
``Retry-After``, whether retrying can help) but never retries by itself.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "AgentrtError",
    "BudgetExhausted",
    "ConfigError",
    "EndpointUnreachable",
    "ProviderError",
    "StructuredOutputError",
    "UnknownModel",
    "UnknownProfile",
    "UserError",
]


class AgentrtError(Exception):
    """Base of every error agentrt raises on purpose."""


class BudgetExhausted(AgentrtError):
    """A model call was not started: the run's spend budget is used up.

    Neither a provider failure (nothing was sent, so no call failed and no
    retry can help) nor a user error: the run goes on without the model.
    """


class UserError(AgentrtError):
    """Something the user can fix; its message is one line naming the fix."""


class ConfigError(UserError):
    """A configuration file or variable is invalid."""


class UnknownProfile(UserError):
    """A simulator profile name that does not exist."""


class ProviderError(AgentrtError):
    """A model endpoint failed a call.

    ``status`` is the HTTP status (``None`` for connection-level failures),
    ``retry_after`` the seconds the provider asked us to wait, and
    ``retryable`` whether repeating the same call may succeed. Quota
    exhaustion (a 429 whose code says the account is out of credit) is not
    retryable: waiting does not refill an account.
    """

    # Statuses where a later identical call can succeed.
    RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after
        self.headers: dict[str, str] = dict(headers or {})
        if retryable is None:
            retryable = status is None or (status in self.RETRYABLE_STATUSES or status >= 500)
            if status == 429 and code == "insufficient_quota":
                retryable = False
        self.retryable = retryable


class EndpointUnreachable(ProviderError, UserError):
    """The endpoint could not be reached at all (refused, reset, DNS)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=None, retryable=True)


class UnknownModel(ProviderError, UserError):
    """The endpoint does not serve the requested model."""

    def __init__(self, message: str, *, status: int | None = 404) -> None:
        super().__init__(message, status=status, retryable=False)


class StructuredOutputError(ProviderError, UserError):
    """The model's answer is not JSON matching the requested schema.

    Not retryable by the retry layer: at temperature 0 (how agents call
    models) the same request gets the same answer again, so a retry would
    only spend time and budget; a caller that samples may retry itself.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, status=None, retryable=False)
