"""The ``capc`` command line: parse flags, call the pipeline, pick a reporter, exit.

One module per command family; what they share is written once:

- ``options``: the shared flags (``--vars``, ``--plugins``, ``--format``...), without
  defaults: a flag left out means "as the project settings say" (``compiler.project``);
- ``running``: the compile request built from the flags, the lock, printing diagnostics;
- ``entry``: ``main``, the one place a failure becomes an exit code (table in
  docs/cli.md: 0 success, 1 problems found, 2 usage or I/O error). No traceback for any
  input.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

import click

from compiler import __version__
from compiler.cli.authoring import import_command, migrate_command, new_command
from compiler.cli.compiling import compile_command, validate_command
from compiler.cli.entry import run
from compiler.cli.pins import lock_command
from compiler.cli.plugins import plugins_command
from compiler.cli.review import (
    budget_command,
    diff_command,
    docs_command,
    explain_command,
    schema_command,
)
from compiler.cli.signing import keygen_command, verify_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="capc")
def cli() -> None:
    """capc — compile capability YAML into one frozen, verified manifest."""


for _command in (compile_command, validate_command, keygen_command, verify_command,
                 lock_command, schema_command, explain_command, diff_command, docs_command,
                 migrate_command, import_command, new_command, plugins_command,
                 budget_command):
    cli.add_command(_command)


def main() -> None:
    """Console entry point: run capc and exit with the code its outcome maps to."""
    exit_without_teardown(run(cli))


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
