"""The console entry point: run the command group and turn every failure into an exit code.

This is the one place exit codes are decided for failures: a capc error carries its own
(``compiler.errors``), click's usage errors are 2, and anything unexpected is reported as
a bug in one line, never as a traceback. Nothing here imports click until a group runs:
``capc compile`` in its common forms runs without it (``compiler.cli.fast_compile``), and
the streams, echo and broken-pipe handling it uses in click's place are these, beside
the ones click's path uses.
"""

from __future__ import annotations

import codecs
import errno
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO, cast

from compiler import __version__
from compiler.errors import CapcError, ExitCode, ProblemsFound, UsageError
from compiler.report.escape import escape_control

if TYPE_CHECKING:
    import click

Echo = Callable[[str, bool], None]
"""Print one line: ``(text, to_stderr)``."""


def click_echo(text: str, err: bool) -> None:
    """One line through ``click.echo`` (which repairs a misconfigured stream's encoding)."""
    import click

    click.echo(text, err=err)


def plain_echo(text: str, err: bool) -> None:
    """``click.echo`` of one line, for the streams :func:`plain_streams` accepts."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def plain_streams() -> bool:
    """Whether click would write to both standard streams as they are: each is there and
    is a text stream with an error handler and an encoding that is not ASCII."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if stream is None or not encoding or getattr(stream, "errors", None) is None:
            return False
        try:
            if codecs.lookup(encoding).name == "ascii":
                return False
        except LookupError:
            return False
    return True


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
    return outcome(lambda: _run_group(group, args), click_echo)


def _run_group(group: click.Group, args: list[str] | None) -> None:
    """Run click's group; click's own endings become what :func:`outcome` maps."""
    import click

    try:
        group.main(args=args, prog_name="capc", standalone_mode=False)
    except click.exceptions.Exit as done:
        raise SystemExit(done.exit_code) from None
    except click.exceptions.Abort:
        raise ProblemsFound("aborted") from None
    except click.ClickException as error:
        error.show(file=_EscapingStream(sys.stderr))  # type: ignore[arg-type]
        raise UsageError() from None  # shown: only its exit code is left to give


def as_click_runs(command: Callable[[], None]) -> None:
    """Run ``command`` with what click's ``main`` adds around a command it invokes (the
    path without click; tests/cli/test_fast_compile.py compares the two)."""
    try:
        command()
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\n")  # click echoes an empty line, then aborts
        sys.stderr.flush()
        raise ProblemsFound("aborted") from None
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        sys.stdout = cast(TextIO, _IgnoreBrokenPipe(sys.stdout))
        sys.stderr = cast(TextIO, _IgnoreBrokenPipe(sys.stderr))
        raise SystemExit(1) from None


class _IgnoreBrokenPipe:
    """A stream whose flush ignores a broken pipe (click's answer to one, so the exit
    does not report it again)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def flush(self) -> None:
        """Flush, unless the reader has gone."""
        try:
            self._stream.flush()
        except OSError as error:
            if error.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def outcome(command: Callable[[], object], echo: Echo) -> int:
    """The exit code of running ``command``: every failure is mapped here, and only here."""
    try:
        command()
    except CapcError as error:
        if str(error):
            echo(escape_control(f"capc: {error}"), True)
        return error.exit_code
    except SystemExit as done:
        return _exit_status(done.code)
    except KeyboardInterrupt:
        return 130
    except RecursionError:  # a hostile manifest nested just shallow enough to parse
        echo("capc: input nested too deeply to process", True)
        return ExitCode.USAGE
    except OSError as error:  # writing an output (a folder, read-only, no space...)
        where = f"{error.filename}: " if error.filename else ""
        echo(escape_control(f"capc: {where}{error.strerror or error}"), True)
        return ExitCode.USAGE
    except Exception as error:
        echo(escape_control(
            f"capc: internal error ({type(error).__name__}: {error}); this is a bug in "
            f"capc {__version__}: please report it with the input that caused it"), True)
        return ExitCode.USAGE
    return ExitCode.OK


def _exit_status(code: object) -> int:
    """The status of ``sys.exit(code)``: an int as it is, None 0, anything else 1."""
    if code is None:
        return ExitCode.OK
    return int(code) if isinstance(code, int) else ExitCode.PROBLEMS
