"""bench/openapi_profile.py: the stage split of one import, as docs/performance.md runs it."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from tests.authoring.openapi.helpers import PETSTORE
from tests.support.paths import REPO_ROOT


def _documented_command() -> list[str]:
    section = (REPO_ROOT / "docs" / "performance.md").read_text(encoding="utf-8").split(
        "## OpenAPI import", 1)[1].split("\n## ", 1)[0]
    line = next(line.strip() for line in section.splitlines()
                if line.startswith("    .venv/bin/python -m bench.openapi_profile"))
    return shlex.split(line)[1:]


def test_the_documented_profile_prints_each_stage(tmp_path: Path) -> None:
    arguments = _documented_command()
    assert arguments[:2] == ["-m", "bench.openapi_profile"]
    # The page's document is a large public one; the same command on the petstore.
    command = [sys.executable, "-m", "bench.openapi_profile", str(PETSTORE),
               *[a for a in arguments[3:] if not a.endswith(".prof")]]
    if "--cprofile" in command:
        command[command.index("--cprofile") + 1:command.index("--cprofile") + 1] = [
            str(tmp_path / "import.prof")]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("petstore.yaml: exit 0,"), lines[0]
    stages = [line.split()[0] for line in lines[1:7]]
    assert stages == ["parse", "map", "render", "compile-check", "write", "other"]
    # The wrappers found the functions they time: the stages are most of the import.
    shares = [float(line.split()[-1].rstrip("%")) for line in lines[1:6]]
    assert sum(shares) > 50, lines
