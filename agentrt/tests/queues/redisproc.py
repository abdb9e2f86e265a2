"""Start a private redis-server for a test, on a free port, in a temp dir."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

REDIS = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _drain(stream: object) -> None:
    for _ in stream:  # type: ignore[attr-defined]
        pass


@dataclass
class RedisProc:
    """A redis-server child; ``start`` returns once it accepts connections."""

    dir: Path
    port: int
    durable: bool = False
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert REDIS is not None
        args = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        args += ["--save", ""]
        if self.durable:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert self.proc.stdout is not None
        seen = []
        for raw in self.proc.stdout:  # blocks on the server's own log, no polling
            line = raw.decode(errors="replace")
            seen.append(line)
            if "Ready to accept connections" in line:
                # keep draining the log so the server never blocks on a full pipe
                threading.Thread(target=_drain, args=(self.proc.stdout,), daemon=True).start()
                return
        raise RuntimeError("redis-server exited at start:\n" + "".join(seen[-5:]))

    def kill(self) -> None:
        """SIGKILL: no shutdown save, only what was fsynced survives."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
            self.proc = None
