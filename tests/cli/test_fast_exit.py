"""The console entry point ends the process without the interpreter's teardown, and still
does what an exit must: atexit handlers, every byte written, the exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT


def _main(tmp_path: Path, *arguments: str, before: str = "") -> subprocess.CompletedProcess[str]:
    program = ("import atexit, sys\n" + before
               + f"sys.argv = ['capc', *{list(arguments)!r}]\n"
               "from compiler.cli import main\nmain()\n")
    environment = {**os.environ, "CAPC_CACHE_DIR": str(tmp_path / "cache"),
                   "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    return subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT, env=environment,
                          capture_output=True, text=True, timeout=120, check=False)


def test_atexit_handlers_run_and_every_byte_arrives(tmp_path: Path) -> None:
    done = _main(tmp_path, "validate", "capabilities", "--format", "json",
                 before="atexit.register(lambda: print('\\natexit ran'))\n")
    assert done.returncode == 0, done.stderr
    report, _, tail = done.stdout.rpartition("\n\natexit ran")
    assert tail.strip() == "" and json.loads(report) is not None


@pytest.mark.parametrize(("arguments", "code"), [
    (("validate", "capabilities"), 0),
    (("validate", "no-such-folder"), 2),
    (("compile", "--nope"), 2),
])
def test_the_exit_code_is_the_commands(tmp_path: Path, arguments: tuple[str, ...],
                                       code: int) -> None:
    assert _main(tmp_path, *arguments).returncode == code


def test_problems_found_exit_1_with_the_report_flushed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "bad.yaml").write_text("apiVersion: capc/v1\nkind: Capability\ncode: 1\n")
    done = _main(tmp_path, "validate", str(tree))
    assert done.returncode == 1
    assert "bad.yaml" in done.stderr and done.stderr.endswith("\n")


def test_a_closed_stdout_takes_pythons_ordinary_exit(tmp_path: Path) -> None:
    # Flushing into a closed pipe fails: the ordinary exit then reports it as Python does.
    program = ("import sys, os\nsys.argv = ['capc', 'schema', 'Capability']\n"
               "os.close(1)\nfrom compiler.cli import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    ordinary = subprocess.run(
        [sys.executable, "-c", program.replace("from compiler.cli import main\nmain()",
                                               "from compiler.cli import cli, run\n"
                                               "sys.exit(run(cli))")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == ordinary.returncode != 0
