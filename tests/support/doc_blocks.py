"""Run the code blocks of a Markdown page, so the docs cannot rot.

A block whose first line is ``# PATH.yaml`` (``.py``, ``.toml``) is written to PATH;
``sh`` blocks run line by line (``capc`` from this venv); other ``python`` blocks run in
one namespace, in order, with top-level ``await`` allowed. A block right after
``<!-- doc-test: REASON -->`` is not run, and the reason is kept so a test can show it.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FENCE = re.compile(
    r"(?:<!-- doc-test: (?P<skip>[^>]*?) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)```", re.S
)


# A block whose first line is `# PATH.ext` is that file's content.
FILE_LINE = re.compile(r"# ([\w./-]+\.(?:yaml|py|toml))\n")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int
    skip: str | None


def code_blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    return [Block(match["lang"], match["body"], text.count("\n", 0, match.start("body")) + 1,
                  match["skip"])
            for match in FENCE.finditer(text)]


async def run_blocks(path: Path, cwd: Path, namespace: dict[str, Any],
                     after_shell: Callable[[str, str], None] | None = None) -> str:
    """Run every block of ``path`` in ``cwd``; returns what the python blocks printed.

    ``after_shell(command, stdout)`` is called after each shell line (a page whose later
    blocks need what a command printed, such as a public key).
    """
    printed = io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        for block in code_blocks(path):
            where = f"{path.name}:{block.line}"
            if block.skip is not None:
                continue
            target = FILE_LINE.match(block.text)
            if target is not None:
                path_of_file = cwd / target[1]
                path_of_file.parent.mkdir(parents=True, exist_ok=True)
                path_of_file.write_text(block.text, encoding="utf-8")
            elif block.lang == "sh":
                for command in block.text.splitlines():
                    if command.strip() and not command.startswith("#"):
                        output = _run_shell(command, cwd, where)
                        printed.write(output)
                        if after_shell is not None:
                            after_shell(command, output)
            elif block.lang == "python":
                code = compile(block.text, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                with contextlib.redirect_stdout(printed):
                    result = eval(code, namespace)
                    if result is not None:
                        await result
    finally:
        os.chdir(previous)
    return printed.getvalue()


def _run_shell(command: str, cwd: Path, where: str) -> str:
    argv = shlex.split(command)
    if argv[0] in ("capc", "python", "pip"):
        argv[0] = str(Path(sys.executable).parent / argv[0])
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{where}: {command}\n{done.stdout}\n{done.stderr}"
    return done.stdout
