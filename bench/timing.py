"""Measuring and reporting: medians of interleaved runs, figures as ratios with their goal.

Each figure compares two things measured in the same run, on the same machine, in
alternation (A B A B ...), so a neighbour's load slows both sides alike and the ratio
stays meaningful on a shared CI runner even when absolute times wander.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Figure:
    """One benchmark line: what was measured against what, the ratio, and the goal.

    ``goal_met`` is None when the figure is informative only (no goal).
    """

    number: str
    title: str
    measured: float
    baseline: float
    unit: str
    ratio: float
    goal: str
    goal_met: bool | None
    reason: str = ""

    def verdict(self) -> str:
        """``met``, ``MISSED (reason)`` or ``info``."""
        if self.goal_met is None:
            return "info"
        if self.goal_met:
            return "met"
        return f"MISSED ({self.reason})" if self.reason else "MISSED"


def ratio_figure(number: str, title: str, measured: float, baseline: float, *,
                 goal_ratio: float | None, goal: str = "", reason: str = "",
                 unit: str = "s") -> Figure:
    """A figure whose goal is ``measured / baseline <= goal_ratio`` (None: no goal)."""
    ratio = measured / baseline if baseline > 0 else float("inf")
    met = None if goal_ratio is None else ratio <= goal_ratio
    text = goal or (f"<= {goal_ratio:g}x" if goal_ratio is not None else "-")
    return Figure(number, title, measured, baseline, unit, ratio, text, met,
                  reason if met is False else "")


def median_pair(measure: Callable[[], float], baseline: Callable[[], float], runs: int
                ) -> tuple[float, float]:
    """Medians of ``runs`` alternating measurements of two callables returning seconds."""
    measured_times: list[float] = []
    baseline_times: list[float] = []
    for _ in range(runs):
        baseline_times.append(baseline())
        measured_times.append(measure())
    return statistics.median(measured_times), statistics.median(baseline_times)


def median_of(measure: Callable[[], float], runs: int) -> float:
    """The median of ``runs`` measurements."""
    return statistics.median(measure() for _ in range(runs))


def timed(action: Callable[[], object]) -> float:
    """Seconds one call of ``action`` takes (monotonic, high resolution)."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def run_process(arguments: Sequence[str], *, cwd: Path | None = None,
                environment: Mapping[str, str] | None = None,
                expect: Sequence[int] = (0,)) -> float:
    """Wall seconds of one subprocess; fails loudly when it exits unexpectedly."""
    env = {**os.environ, **(environment or {})}
    start = time.perf_counter()
    done = subprocess.run(list(arguments), cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in expect:
        raise RuntimeError(f"{' '.join(arguments[:3])} ... exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def venv_tool(name: str) -> str:
    """The path of a console script installed next to this interpreter."""
    return str(Path(sys.executable).with_name(name))


def format_duration(seconds: float, unit: str) -> str:
    """``1.23 s`` / ``12.3 ms`` / ``45 µs``, or a throughput as given."""
    if unit != "s":
        return f"{seconds:,.0f} {unit}"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def format_table(figures: Sequence[Figure]) -> str:
    """The figures as an aligned text table (also valid Markdown)."""
    header = ("#", "figure", "measured", "baseline", "ratio", "goal", "verdict")
    rows = [header] + [
        (f.number, f.title, format_duration(f.measured, f.unit),
         format_duration(f.baseline, f.unit), f"{f.ratio:.2f}x", f.goal, f.verdict())
        for f in figures
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |"
             for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
