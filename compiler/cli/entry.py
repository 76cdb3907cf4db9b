"""The console entry point: run the command group and turn every failure into an exit code.

This is the one place exit codes are decided for failures: a capc error carries its own
(``compiler.errors``), click's usage errors are 2, and anything unexpected is reported as
a bug in one line, never as a traceback.
"""

from __future__ import annotations

import sys
from typing import TextIO

import click

from compiler import __version__
from compiler.errors import CapcError, ExitCode
from compiler.report.escape import escape_control


class _EscapingStream:
    """A text stream that shows control characters as escapes (usage errors quote argv)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its controls escaped; line breaks stay."""
        return self._stream.write(escape_control(text, keep_newlines=True))

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self._stream.flush()


def run(group: click.Group, args: list[str] | None = None) -> int:
    """Run ``group`` with ``args`` (default: ``sys.argv[1:]``) and return its exit code.

    Everything a command prints goes to ``sys.stdout``/``sys.stderr`` as they are now, so
    a test can call this in-process with redirected streams.
    """
    try:
        group.main(args=args, prog_name="capc", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        click.echo("capc: aborted", err=True)
        return ExitCode.PROBLEMS
    except click.ClickException as error:
        error.show(file=_EscapingStream(sys.stderr))  # type: ignore[arg-type]
        return ExitCode.USAGE
    except CapcError as error:
        if str(error):
            click.echo(escape_control(f"capc: {error}"), err=True)
        return error.exit_code
    except SystemExit as done:
        return _exit_status(done.code)
    except KeyboardInterrupt:
        return 130
    except RecursionError:  # a hostile manifest nested just shallow enough to parse
        click.echo("capc: input nested too deeply to process", err=True)
        return ExitCode.USAGE
    except OSError as error:  # writing an output (a folder, read-only, no space...)
        where = f"{error.filename}: " if error.filename else ""
        click.echo(escape_control(f"capc: {where}{error.strerror or error}"), err=True)
        return ExitCode.USAGE
    except Exception as error:
        click.echo(escape_control(
            f"capc: internal error ({type(error).__name__}: {error}); this is a bug in "
            f"capc {__version__}: please report it with the input that caused it"), err=True)
        return ExitCode.USAGE
    return ExitCode.OK


def _exit_status(code: object) -> int:
    """The status of ``sys.exit(code)``: an int as it is, None 0, anything else 1."""
    if code is None:
        return ExitCode.OK
    return int(code) if isinstance(code, int) else ExitCode.PROBLEMS
