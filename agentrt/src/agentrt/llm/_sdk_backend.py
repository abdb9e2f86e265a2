"""SdkModel: the base of the backends that reach a provider through its official SDK.

The OpenAI-compatible and the Anthropic backends differ in their SDK and
nothing else here: the same endpoint options, one SDK client per model,
built with the SDK's retries off (retrying is one layer's job, ours: two
retrying layers multiply attempts), closed with the model.
"""

from __future__ import annotations

import abc
from typing import Any, Generic, Protocol, TypeVar

from agentrt._clock import Clock
from agentrt.llm._client import ModelClient
from agentrt.metrics._recorder import MetricsRecorder

__all__ = ["SdkModel"]


class _Closable(Protocol):
    async def close(self) -> None: ...


S = TypeVar("S", bound=_Closable)


class SdkModel(ModelClient, Generic[S]):
    """A backend that sends through ``sdk``, a provider SDK's async client.

    ``http_client`` is handed to the SDK as is (tests pass one whose
    transport is the in-process simulator); ``base_url`` ``None`` is the
    provider's own endpoint.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str | None = None,
        timeout_s: float = 600.0,
        http_client: Any = None,
        max_concurrency: int | None = None,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        super().__init__(
            model=model,
            name=name or self._default_name(base_url),
            max_concurrency=max_concurrency,
            clock=clock,
            recorder=recorder,
        )
        self.base_url = base_url
        self.sdk: S = self._connect(
            base_url=base_url, api_key=api_key, timeout_s=timeout_s, http_client=http_client
        )

    @abc.abstractmethod
    def _default_name(self, base_url: str | None) -> str:
        """The endpoint's label in metrics when the configuration gives none."""

    @abc.abstractmethod
    def _connect(
        self, *, base_url: str | None, api_key: str | None, timeout_s: float, http_client: Any
    ) -> S:
        """The SDK's client, with ``max_retries=0``."""

    async def aclose(self) -> None:
        await self.sdk.close()
