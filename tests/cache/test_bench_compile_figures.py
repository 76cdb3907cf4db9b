"""The compile figures' command (docs/performance.md, "Reproduce") runs, and what figures 3
and 3p time is what they say: cache hits, and a project that compiles cleanly.

No timing is asserted: the bench reports, tests do not gate on speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.cli_figures import compile_folders, write_project
from bench.corpus import write_corpus

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_command_prints_the_compile_figures() -> None:
    done = subprocess.run([sys.executable, "-m", "bench.cli_figures", "--files", "30",
                           "--runs", "1"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    for number in ("1", "3", "3b", "3c", "3p"):
        assert f"| {number} " in done.stdout


def test_the_project_of_figure_3p_compiles_cleanly_and_hits(tmp_path: Path) -> None:
    project = write_project(write_corpus(tmp_path / "project" / "capabilities", 40),
                            tmp_path / "project")
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "user-cache"),
                   "CAPC_CACHE_DIR": "", "CAPC_NO_CACHE": ""}
    command = [sys.executable, "-m", "compiler", "compile"]
    first = subprocess.run(command, cwd=project, env=environment, capture_output=True,
                           text=True, timeout=300, check=False)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "error[" not in first.stderr
    cache = tmp_path / "user-cache" / "capc"
    entries = {path.suffix for path in cache.iterdir()}
    assert {".tree", ".files"} <= entries  # the default folder, outside the project
    second = subprocess.run(command, cwd=project, env=environment, capture_output=True,
                            text=True, timeout=300, check=False)
    assert (second.returncode, second.stdout, second.stderr) == (
        first.returncode, first.stdout, first.stderr)


def test_figure_3_runs_where_the_user_cache_key_is_not_ephemeral(tmp_path: Path) -> None:
    """Figure 3's compiles run in a folder that does not hold their user cache root, so
    the key is the machine's and a warm run can hit (with the key inside the working
    directory capc uses a key for one process, and figure 3 timed misses)."""
    from compiler.cache.cache_keys import ephemeral_key, machine_key

    here, user_cache = compile_folders(tmp_path)
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(user_cache)
    try:
        assert machine_key(here) != ephemeral_key()
    finally:
        if previous is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def test_the_documented_warm_comparison_prints_both_checkouts() -> None:
    done = subprocess.run([sys.executable, "-m", "bench.compare_warm", str(ROOT), "--files",
                           "20", "--runs", "1"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| /", "| this"))]
    assert len(rows) == 2 and all(line.count("x |") == 2 for line in rows), done.stdout
