"""CI runners for the adoption tests: fresh virtualenvs with pip and no capc."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def fresh_runner(folder: Path, template: Path) -> Path:
    """Another runner venv like ``template``, before anything is installed into it."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    purelib = next(template.glob("lib/python*/site-packages"))
    target = next(venv.glob("lib/python*/site-packages"))
    shutil.copy(purelib / "runner_dependencies.pth", target / "runner_dependencies.pth")
    return venv
