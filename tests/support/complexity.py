"""Complexity tests: time a workload at size n and 8n in a child process with a time limit.

A ratio of two sizes measured in the same process is robust to a loaded machine (both
sizes slow down alike); absolute times are not, so no test asserts one. The child process
has a time limit, so a regression to super-linear work fails the test instead of hanging
the suite. A workload is a module-level function ``(n) -> Callable[[], object]``: it
builds its input outside the timing and returns the action to time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from tests.support.paths import REPO_ROOT

GROWTH = 8
# A linear workload's ratio is about 8; a quadratic one's about 64. The slack absorbs
# noise (a loaded 2-core machine, a garbage collection in one run) without letting a
# quadratic regression through.
MAX_RATIO = 32.0
DEFAULT_TIME_LIMIT = 120.0

_CHILD = """
import importlib, json, sys, time
module, name = sys.argv[1].split(":")
workload = getattr(importlib.import_module(module), name)
small, growth, repeats = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def best(n, calls):
    fastest = float("inf")
    for _ in range(repeats):
        action = workload(n)
        started = time.process_time()
        for _ in range(calls):
            action()
        fastest = min(fastest, (time.process_time() - started) / calls)
    return fastest

# A run of a few microseconds is all noise (a page fault, a timer tick): the small size
# is repeated until it takes a measurable time, and the large one as often.
calls, action = 1, workload(small)
started = time.process_time()
action()
once = time.process_time() - started
calls = max(1, min(1000, int(0.05 / max(once, 1e-7))))
print(json.dumps([best(small, calls), best(small * growth, calls)]))
"""


@dataclass(frozen=True, slots=True)
class Scaling:
    """The best times of a workload at n and at 8n."""

    small: float
    large: float

    @property
    def ratio(self) -> float:
        """How much longer 8n took than n."""
        return self.large / max(self.small, 1e-9)


def measure_scaling(workload: str, n: int, *, repeats: int = 5,
                    time_limit: float = DEFAULT_TIME_LIMIT) -> Scaling:
    """Time ``workload`` ("module:function") at ``n`` and ``8 n`` in a child process.

    Raises AssertionError when the child does not finish within ``time_limit`` seconds
    (a super-linear regression) or fails.
    """
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    try:
        finished = subprocess.run(
            [sys.executable, "-c", _CHILD, workload, str(n), str(GROWTH), str(repeats)],
            capture_output=True, text=True, timeout=time_limit, env=environment,
            cwd=REPO_ROOT,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"{workload} at n={n} and {GROWTH}n did not finish within {time_limit:g} s"
        ) from None
    assert finished.returncode == 0, finished.stderr[-3000:]
    small, large = json.loads(finished.stdout.strip().splitlines()[-1])
    return Scaling(small, large)


def assert_linear(workload: str, n: int, *, repeats: int = 5,
                  time_limit: float = DEFAULT_TIME_LIMIT) -> Scaling:
    """Assert ``workload`` takes at most about linear time: 8n within MAX_RATIO of n."""
    scaling = measure_scaling(workload, n, repeats=repeats, time_limit=time_limit)
    if scaling.ratio > MAX_RATIO:
        # One more measurement before failing: a noisy run (another process's cache
        # pressure) rarely repeats, while super-linear work is super-linear every time.
        again = measure_scaling(workload, n, repeats=repeats, time_limit=time_limit)
        scaling = min(scaling, again, key=lambda measured: measured.ratio)
    assert scaling.ratio <= MAX_RATIO, (
        f"{workload}: {GROWTH}x the input took {scaling.ratio:.1f}x the time "
        f"({scaling.small:.4f} s -> {scaling.large:.4f} s); linear work is about {GROWTH}x"
    )
    return scaling
