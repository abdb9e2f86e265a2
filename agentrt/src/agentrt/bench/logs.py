"""`logs`: chunking a generated multi-GB log as a stream: MB/s and peak RSS.

The log is generated into a temporary directory (deleted afterwards) and
chunked in a child process, so the child's peak resident memory is the
chunker's alone; a second child that only imports agentrt gives the
baseline the chunker adds to.
"""

from __future__ import annotations

import asyncio
import json
import random
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from agentrt.bench.harness import BenchResult, benchmark
from agentrt.chunking._logs import chunk_log_file

__all__ = ["LogsOptions", "chunk_file_stats", "run_logs", "write_log"]

_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
_SERVICES = ("api", "db", "cache", "auth", "queue")


def write_log(path: Path, size_bytes: int, seed: int = 1) -> int:
    """Write about ``size_bytes`` of log lines; returns the bytes written.

    A 4 MB block of varied lines is generated once and written repeatedly
    with a changing block number, so generating 2 GB costs seconds.
    """
    rng = random.Random(seed)
    lines = []
    for i in range(40_000):
        svc = rng.choice(_SERVICES)
        lines.append(
            f"T{i:06d} {rng.choice(_LEVELS)} {svc} req={rng.getrandbits(48):012x} "
            f"latency_ms={rng.randint(1, 5000)} path=/v1/{svc}/{rng.randint(1, 999)} "
            + "detail " * rng.randint(0, 12)
            + "\n"
        )
    block = "".join(lines).encode()
    written = 0
    with open(path, "wb") as f:
        n = 0
        while written < size_bytes:
            head = f"2024-01-01 block {n}\n".encode()
            f.write(head)
            f.write(block)
            written += len(head) + len(block)
            n += 1
    return written


def chunk_file_stats(path: str, budget: int) -> dict[str, float]:
    """Chunk a whole file (in this process); counts and timing."""
    t0 = time.perf_counter()
    chunks = lines = size = biggest = 0
    for c in chunk_log_file(path, budget):
        chunks += 1
        size += len(c.data)
        lines = c.last_line
        biggest = max(biggest, c.tokens)
    seconds = time.perf_counter() - t0
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "chunks": chunks,
        "lines": lines,
        "bytes": size,
        "max_chunk_tokens": biggest,
        "seconds": seconds,
        "peak_rss_mb": rss_kb / 1024,
    }


async def _child(code: str) -> dict[str, float]:
    """Run ``code`` in a child Python; it prints one JSON object of numbers."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"chunking child exited with {proc.returncode}")
    result: dict[str, float] = json.loads(out)
    return result


@dataclass(frozen=True, slots=True)
class LogsOptions:
    size_mb: int = 2048  # of the generated log
    budget_tokens: int = 2000  # per chunk


@benchmark(
    "logs",
    "stream-chunk a generated 2 GB log: MB/s and peak RSS (child process)",
    LogsOptions,
)
async def run_logs(opts: LogsOptions) -> BenchResult:
    size = opts.size_mb * 1024 * 1024
    budget = opts.budget_tokens
    with tempfile.TemporaryDirectory(prefix="agentrt-logs-") as tmp:
        path = Path(tmp) / "big.log"
        t0 = time.perf_counter()
        written = await asyncio.to_thread(write_log, path, size)
        gen_s = time.perf_counter() - t0
        base = await _child(
            "import json, resource, agentrt.chunking._logs; "
            "print(json.dumps({'peak_rss_mb': "
            "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
        )
        stats = await _child(
            "import json; from agentrt.bench.logs import chunk_file_stats; "
            f"print(json.dumps(chunk_file_stats({str(path)!r}, {budget})))"
        )
    mb = written / 1e6
    mbps = mb / stats["seconds"]
    ok_all = stats["bytes"] == written
    return BenchResult(
        name="logs",
        figures={
            "log_mb": round(mb, 1),
            "budget_tokens": budget,
            "chunks": stats["chunks"],
            "lines": stats["lines"],
            "max_chunk_tokens": stats["max_chunk_tokens"],
            "chunk_s": round(stats["seconds"], 3),
            "mb_per_s": round(mbps, 1),
            "peak_rss_mb": round(stats["peak_rss_mb"], 1),
            "baseline_rss_mb": round(base["peak_rss_mb"], 1),
            "generate_s": round(gen_s, 2),
        },
        ratios=(("peak RSS / log size", stats["peak_rss_mb"] / (written / 2**20)),),
        checks=(
            ("peak RSS under 300 MB", stats["peak_rss_mb"] < 300),
            (
                "every byte chunked, no chunk over budget",
                ok_all and stats["max_chunk_tokens"] <= budget,
            ),
        ),
        notes=(
            "chunked in a child process (ru_maxrss of that child); the log was read from the "
            "page cache right after being written, and deleted afterwards",
        ),
    )
