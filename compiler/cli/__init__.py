"""The ``capc`` command line: parse flags, call the pipeline, pick a reporter, exit.

One module per command family; what they share is written once:

- ``options``: the shared flags (``--vars``, ``--plugins``, ``--format``...), without
  defaults: a flag left out means "as the project settings say" (``compiler.project``);
- ``running``: the compile request built from the flags, the lock, printing diagnostics;
- ``entry``: ``main``, the one place a failure becomes an exit code (table in
  docs/cli.md: 0 success, 1 problems found, 2 usage or I/O error). No traceback for any
  input;
- ``group``: the click group of every command, built on first use (``cli`` below);
- ``fast``: ``capc compile`` in its common forms, run without importing click (about a
  tenth of a small compile's CPU); any other command line goes through click.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, NoReturn


def main() -> None:
    """Console entry point: run capc and exit with the code its outcome maps to."""
    from compiler.cli.fast_compile import common_compile, run_common_compile

    call = common_compile(sys.argv[1:])
    if call is not None:
        # The compile's documents and entries are held here to the end: the exit frees
        # them at no cost, where freeing them one by one costs about 2% of a compile.
        kept: list[object] = []
        exit_without_teardown(run_common_compile(call, kept))
    from compiler.cli.entry import run
    from compiler.cli.group import cli

    exit_without_teardown(run(cli))


def __getattr__(name: str) -> Any:
    # ``compiler.cli.cli`` and ``compiler.cli.run``, imported when first asked for: the
    # group imports click and every command's module, which the fast path never needs.
    if name == "cli":
        from compiler.cli.group import cli

        return cli
    if name == "run":
        from compiler.cli.entry import run

        return run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def exit_without_teardown(code: int) -> NoReturn:
    """End this one-shot process with ``code``, skipping the interpreter's teardown.

    Freeing every module and object one by one at exit costs a compile about 30 ms and
    does nothing a finished command needs (mypy exits the same way). What an exit must
    still do is done first: the ``atexit`` handlers run (temporary folders, log flushes)
    and the standard streams are flushed; every file a command writes is closed before
    it returns. A stream that cannot be flushed (a closed pipe) takes the ordinary exit,
    whose handling of it is Python's.
    """
    atexit._run_exitfuncs()  # each handler once: this also empties the list
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


__all__ = ["cli", "exit_without_teardown", "main", "run"]
