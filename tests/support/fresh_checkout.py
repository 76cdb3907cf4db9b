"""A fresh copy of this checkout, as `git clone` would give it, whose `.venv` is ready.

Installing capc with pip in every such test would take a minute and need an index; the
copy's `.venv` is instead a real virtualenv (no pip) whose site-packages point at the
copy itself and at this test run's site-packages, with `.venv/bin/capc` and the install
stamps in place, so the Makefile sees an installed tree and the copy's own code runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.support.paths import REPO_ROOT

STAMPS = (".compile", ".installed")


def tracked_files(root: Path = REPO_ROOT) -> list[str]:
    """What a clone of ``root`` holds: the files git tracks (``git add`` a new one first).

    Never the working directory's other files: a developer's scratch file, or the one the
    README's tour asks to write, must not change what the tests copy (issue 30).
    """
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root,
                            capture_output=True, check=True).stdout.decode()
    return sorted(name for name in listed.split("\0")
                  if name and ((root / name).exists() or (root / name).is_symlink()))


def copy_tracked(target: Path, root: Path = REPO_ROOT) -> Path:
    """Copy what git tracks in ``root`` to ``target`` (symlinks as symlinks)."""
    for name in tracked_files(root):
        source = root / name
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), destination)
        elif source.is_file():
            shutil.copy2(source, destination)
    return target


def fresh_checkout(target: Path) -> Path:
    """Copy the checkout to ``target`` and give it a ready ``.venv``; return ``target``."""
    copy_tracked(target)
    venv = target / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True)
    purelib = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})
                   ["purelib"])
    # The copy first, so `compiler` is the copy's code; then what this run has installed.
    purelib.joinpath("capc_fresh_checkout.pth").write_text(
        f"{target}\n{sysconfig.get_paths()['purelib']}\n")
    script = venv / "bin" / "capc"
    script.write_text(f"#!{venv / 'bin' / 'python'}\n"
                      "import sys\n\nfrom compiler.cli import main\n\nsys.exit(main())\n")
    script.chmod(0o755)
    for stamp in STAMPS:  # newer than every copied file: make has nothing to install
        (venv / stamp).touch()
    return target


def environment(**extra: str) -> dict[str, str]:
    """The environment a CI runner gives commands: no VIRTUAL_ENV of this test run."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(sys.prefix))
    env.update(extra)
    return env
