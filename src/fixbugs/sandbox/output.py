"""Capped capture of a command's output stream.

A test run's verdict is at its end and its first error near its start, so
:class:`CappedOutput` keeps the head and the tail of a stream within a byte
budget and counts what it dropped. It is a plain state machine: feed chunks,
read the text; the async driver only moves bytes.
"""

from __future__ import annotations

from collections import deque

__all__ = ["CappedOutput"]


class CappedOutput:
    """Head and tail of a byte stream under ``cap`` bytes in total."""

    def __init__(self, cap: int, *, runaway_factor: int = 16) -> None:
        if cap < 2:
            raise ValueError("cap must be at least 2 bytes")
        self.cap = cap
        self._head_cap = cap // 2
        self._tail_cap = cap - self._head_cap
        self._runaway_at = cap * runaway_factor
        self._head = bytearray()
        # invariant: sum of chunk lengths in _tail <= _tail_cap + len(_tail[0])
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total = 0

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    @property
    def runaway(self) -> bool:
        """The stream passed ``runaway_factor`` times its cap: stop the writer."""
        return self.total > self._runaway_at

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_len += len(chunk)
        while self._tail and self._tail_len - len(self._tail[0]) >= self._tail_cap:
            self._tail_len -= len(self._tail.popleft())

    def text(self) -> str:
        """The kept bytes as text, with a marker where bytes were dropped."""
        tail = b"".join(self._tail)
        if len(tail) > self._tail_cap:
            tail = tail[-self._tail_cap :]
        head = bytes(self._head).decode("utf-8", errors="replace")
        rest = tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + rest
        dropped = self.total - len(self._head) - len(tail)
        return f"{head}\n[... {dropped} bytes of output dropped ...]\n{rest}"
