"""Draw a run's report: Gantt and concurrency plots to PNG, and one HTML page.

matplotlib with the Agg backend (no display); the HTML embeds the PNGs, so
the page is one self-contained file to attach to an issue.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from agentrt.report._timeline import ConcurrencyPoint, Run, concurrency_profile, gantt

__all__ = ["ReportFiles", "render_report"]

_COLORS = {"stage": "#cfe2f3", "model": "#3d85c6", "tool": "#93c47d"}


@dataclass(frozen=True, slots=True)
class ReportFiles:
    gantt_png: Path
    concurrency_png: Path
    html: Path


def _gantt_png(run: Run, path: Path) -> None:
    bars = gantt(run)
    rows = list(dict.fromkeys(b.row for b in bars))
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.5))
    for b in bars:
        y = rows.index(b.row)
        h, off = (0.8, -0.4) if b.kind == "stage" else (0.4, -0.2)
        color = "#e06666" if b.failed else _COLORS.get(b.kind, "#999")
        ax.broken_barh([(b.start, max(b.end - b.start, 1e-3))], (y + off, h), color=color)
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the run started")
    ax.set_title(f"{run.title}: stages and calls")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _concurrency_png(points: list[ConcurrencyPoint], path: Path) -> None:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    xs = [p.level for p in points]
    a1.plot(xs, [p.output_tps for p in points], marker="o")
    a1.set_xlabel("calls in flight")
    a1.set_ylabel("output tokens/s (all calls)")
    a1.set_title("throughput vs concurrency")
    lat = [(p.level, p.latency_p50_s, p.latency_p95_s) for p in points if p.latency_p50_s]
    a2.plot([x for x, _, _ in lat], [m for _, m, _ in lat], marker="o", label="p50")
    a2.plot([x for x, _, _ in lat], [q for _, _, q in lat], marker="x", label="p95")
    a2.set_xlabel("calls in flight at the call's start")
    a2.set_ylabel("call wall s")
    a2.set_title("latency vs concurrency")
    a2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def render_report(run: Run, out_dir: Path, stem: str = "report") -> ReportFiles:
    out_dir.mkdir(parents=True, exist_ok=True)
    files = ReportFiles(
        out_dir / f"{stem}-gantt.png", out_dir / f"{stem}-concurrency.png", out_dir / f"{stem}.html"
    )
    points = concurrency_profile(run.calls)
    _gantt_png(run, files.gantt_png)
    _concurrency_png(points, files.concurrency_png)
    rows = "".join(
        f"<tr><td>{p.level}</td><td>{p.seconds:.2f}</td><td>{p.calls_started}</td>"
        f"<td>{'-' if p.latency_p50_s is None else f'{p.latency_p50_s:.3f}'}</td>"
        f"<td>{p.output_tps:.1f}</td></tr>"
        for p in points
    )
    files.html.write_text(
        "<!doctype html><meta charset=utf-8>"
        f"<title>{html.escape(run.title)}</title><h1>{html.escape(run.title)}</h1>"
        f"<p>{len(run.calls)} calls.</p><h2>Timeline</h2>{_img(files.gantt_png)}"
        f"<h2>Throughput and latency vs concurrency</h2>{_img(files.concurrency_png)}"
        "<table border=1><tr><th>in flight</th><th>seconds</th><th>calls started</th>"
        f"<th>p50 wall s</th><th>output tok/s</th></tr>{rows}</table>\n"
    )
    return files
