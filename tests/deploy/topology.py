"""deploy/compose.yaml's services as local processes: the deployment, tested without Docker.

:func:`load_compose` reads the compose file (PyYAML) into :class:`ServiceSpec` values, and
:class:`Topology` starts each service's own command as a process of this machine, with
the few rewrites a host without Docker needs (:meth:`Topology.argv`): the compose
network's ``redis://redis:6379`` becomes a ``redis-server`` on a free port with a data
directory of its own, the shared ``/srv/fixbugs`` volume a temporary directory, the
API's ``--host 0.0.0.0 --port 8000`` loopback on a free port, and ``fixbugs`` this
virtualenv's. A service's ``deploy.replicas`` starts that many processes. Everything else
(the stages each worker serves, the Redis settings, the environment a service passes
through) is the compose file's, so a change there changes what the tests run.

It can also do to a process what an operator or a crash does to a container: kill one
(``SIGKILL``), start another in its place (compose's ``restart: unless-stopped``),
restart Redis on the same data directory, restart the API.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import yaml
from redisproc import free_port

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
FIXBUGS = str(Path(sys.executable).parent / "fixbugs")
COMPOSE_REDIS = "redis://redis:6379"  # the compose network's Redis, as services name it
COMPOSE_WORKSPACE = "/srv/fixbugs"  # the shared volume's mount point
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")
_READY_S = 120.0  # a process that is not serving by then has failed to start


class StartError(RuntimeError):
    """A service did not come up; the message holds the tail of its log."""


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """One compose service: its command, its environment, how many replicas."""

    name: str
    command: tuple[str, ...]
    # (name, value); value None: passed through from the caller's environment if set there
    environment: tuple[tuple[str, str | None], ...] = ()
    replicas: int = 1


def load_compose(path: Path = COMPOSE) -> dict[str, ServiceSpec]:
    """The services of the compose file at ``path``, by name, in the file's order."""
    doc = yaml.safe_load(path.read_text())
    out: dict[str, ServiceSpec] = {}
    for name, svc in doc["services"].items():
        env = svc.get("environment") or ()
        pairs: list[tuple[str, str | None]] = []
        if isinstance(env, Mapping):
            pairs = [(str(k), None if v is None else str(v)) for k, v in env.items()]
        else:
            for entry in env:
                key, eq, value = str(entry).partition("=")
                pairs.append((key, value if eq else None))
        replicas = int((svc.get("deploy") or {}).get("replicas", 1))
        out[name] = ServiceSpec(name, tuple(str(a) for a in svc["command"]), tuple(pairs), replicas)
    return out


def interpolate(value: str, env: Mapping[str, str]) -> str:
    """Compose's ``${NAME}``, ``${NAME:-default}`` and ``${NAME:?error}``, from ``env``."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        got = env.get(name)
        if got:
            return got
        if op and op.endswith("?"):
            raise StartError(f"{name} is required: {arg}")
        return arg if op else ""

    return _VAR.sub(one, value)


@dataclass
class Proc:
    """One running process of a service; ``name`` is how workers tag events (host:pid)."""

    service: str
    popen: subprocess.Popen[bytes]
    log: Path
    started_at: float = field(default_factory=time.time)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def name(self) -> str:
        return f"{socket.gethostname()}:{self.popen.pid}"

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def _drain(stream: IO[bytes], log: IO[bytes]) -> None:
    for line in stream:
        log.write(line)
        log.flush()


class Topology:
    """The compose file's services as processes under ``root`` (workspace, Redis data, logs).

    ``env`` is the operator's environment for the compose file (``FIXBUGS_API_KEYS``,
    ``OPENAI_BASE_URL``, ...): what ``${...}`` and pass-through entries read.
    ``extra_args`` adds arguments to a service's command (a test's short lease, or
    ``--no-model``). Use it as a context manager: every process it started is stopped.
    """

    def __init__(
        self,
        root: Path,
        *,
        env: Mapping[str, str],
        extra_args: Mapping[str, Sequence[str]] | None = None,
        compose: Path = COMPOSE,
    ) -> None:
        self.root = root
        self.env = dict(env)
        self.extra_args = {k: list(v) for k, v in (extra_args or {}).items()}
        self.services = load_compose(compose)
        self.workspace = root / "workspace"
        self.redis_dir = root / "redis-data"
        self.logs = root / "logs"
        for d in (self.workspace, self.redis_dir, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        self.redis_port = free_port()
        self.api_port = free_port()
        self.redis: Proc | None = None
        self.api: Proc | None = None
        self.procs: list[Proc] = []  # every process started, dead ones included
        self._count = 0

    # -- addresses -------------------------------------------------------------
    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def worker_services(self) -> list[str]:
        """The services whose command is ``fixbugs worker`` (compose order)."""
        return [n for n, s in self.services.items() if s.command[:2] == ("fixbugs", "worker")]

    def workers(self, service: str | None = None) -> list[Proc]:
        """The live worker processes (of ``service`` only, if given)."""
        names = [service] if service else self.worker_services
        return [p for p in self.procs if p.service in names and p.alive()]

    # -- commands --------------------------------------------------------------
    def argv(self, service: str) -> list[str]:
        """``service``'s compose command, rewritten for this host (see the module)."""
        spec = self.services[service]
        out = []
        args = list(spec.command)
        for i, a in enumerate(args):
            prev = args[i - 1] if i else ""
            if i == 0 and a == "fixbugs":
                a = FIXBUGS
            elif prev == "--host":
                a = "127.0.0.1"
            elif prev == "--port":
                a = str(self.api_port)
            a = a.replace(COMPOSE_REDIS, self.redis_url).replace(
                COMPOSE_WORKSPACE, str(self.workspace)
            )
            out.append(a)
        return out + self.extra_args.get(service, [])

    def environment(self, service: str) -> dict[str, str]:
        """This process's environment plus what the compose file gives ``service``."""
        env = dict(os.environ)
        for key, value in self.services[service].environment:
            if value is None:
                if key in self.env:
                    env[key] = self.env[key]
            else:
                env[key] = interpolate(value, self.env)
        return env

    def _spawn(self, service: str, argv: list[str], env: Mapping[str, str]) -> Proc:
        self._count += 1
        log = self.logs / f"{service}-{self._count}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=dict(env), cwd=self.root
            )
        proc = Proc(service, popen, log)
        self.procs.append(proc)
        return proc

    # -- Redis -----------------------------------------------------------------
    def start_redis(self) -> Proc:
        """The compose file's ``redis-server`` command on the local port and data dir."""
        spec = self.services["redis"]
        server = shutil.which(spec.command[0])
        if server is None:
            raise StartError(f"{spec.command[0]} is not installed")
        argv = [server, *spec.command[1:], "--port", str(self.redis_port)]
        argv += ["--bind", "127.0.0.1", "--dir", str(self.redis_dir)]
        self._count += 1
        log = self.logs / f"redis-{self._count}.log"
        popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert popen.stdout is not None
        seen: list[bytes] = []
        out = log.open("wb")
        for line in popen.stdout:  # blocks on the server's own log, no polling
            out.write(line)
            seen.append(line)
            if b"Ready to accept connections" in line:
                out.flush()
                # keep draining the log so the server never blocks on a full pipe
                threading.Thread(target=_drain, args=(popen.stdout, out), daemon=True).start()
                self.redis = Proc("redis", popen, log)
                self.procs.append(self.redis)
                return self.redis
        out.close()
        raise StartError("redis-server exited at start:\n" + b"".join(seen[-5:]).decode())

    def restart_redis(self) -> None:
        """Stop Redis as ``docker compose restart`` does (SIGTERM: it writes its AOF and
        exits), then start it again on the same data directory."""
        if self.redis is not None:
            self.redis.popen.send_signal(signal.SIGTERM)
            self.redis.popen.wait(60)
        self.start_redis()

    # -- the API and the workers -----------------------------------------------
    def start_api(self) -> Proc:
        """The API service; returns once ``/healthz`` answers."""
        self.api = self._spawn("api", self.argv("api"), self.environment("api"))
        deadline = time.monotonic() + _READY_S
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if not self.api.alive():
                    break
                try:
                    if client.get(f"{self.api_url}/healthz").status_code == 200:
                        return self.api
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        raise StartError(f"the API did not start:\n{self.api.tail()}")

    def kill_api(self) -> None:
        if self.api is not None:
            self.kill(self.api)

    def start_worker(self, service: str) -> Proc:
        return self._spawn(service, self.argv(service), self.environment(service))

    def kill(self, proc: Proc) -> None:
        """``kill -9``: no shutdown, no flush; what it held comes back after its lease."""
        if proc.alive():
            proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(60)

    def start(self) -> None:
        """Redis, the API, then each worker service's replicas."""
        self.start_redis()
        self.start_api()
        for service in self.worker_services:
            for _ in range(self.services[service].replicas):
                self.start_worker(service)

    def close(self) -> None:
        """Stop every process still running (workers first, Redis last)."""
        order = sorted(self.procs, key=lambda p: p.service == "redis")
        for p in order:
            if p.alive():
                p.popen.send_signal(signal.SIGTERM)
        for p in order:
            try:
                p.popen.wait(30)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                p.popen.wait(30)

    def __enter__(self) -> Topology:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def logs_tail(self) -> str:
        """The last lines of every process's log (for a failure's message)."""
        return "\n".join(f"--- {p.service} {p.name}\n{p.tail()}" for p in self.procs)
