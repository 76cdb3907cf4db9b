"""``capc compile`` in its common forms, run without click.

Importing click and building the group of fourteen commands is about a tenth of a small
tree's compile in CPU (click, and the uuid, datetime and gettext modules it imports at
its top). The lines ``make compile`` and CI run are parsed here: ``compile``, then
sources, ``-o FILE``/``--output FILE``/``--output=FILE`` and ``--check``, each flag at
most once. Any other line (another command, any other flag, ``--help``, ``-``, ``--``, a
value starting with ``-``) returns None from :func:`common_compile`, and click parses it.

Why the result is click's (tests/cli/test_fast_compile.py compares both):

- parsing: every accepted token is one of the three flags or a positional, and none
  starts with ``-``, so no rule of click's parser about option clusters, ``--``, ``-``
  or prefixes is involved; every other parameter takes its default (none reads the
  environment), which :class:`CompileRequest` spells the same way;
- running: as click's ``main`` runs a command that returns: not when shell completion
  is asked for (``_CAPC_COMPLETE``) or on Windows (click expands globs in argv there);
  Ctrl-C and end of input print a newline and abort; a broken pipe exits 1 with flushes
  that ignore it; failures are mapped by the same :func:`~compiler.cli.entry.outcome`
  (the streams, the echo and the broken-pipe answer are ``compiler.cli.entry``'s, one copy
  for both paths);
- printing: ``click.echo`` writes a line to the stream as it is when the stream names an
  encoding other than ASCII (else click re-wraps it, and this path is not taken), and
  strips ANSI sequences, which no line here has (each is escaped: no ESC is left).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from compiler.cli.entry import as_click_runs, outcome, plain_echo, plain_streams

_OUTPUT_FLAGS = ("-o", "--output")
_OUTPUT_EQUALS = "--output="


class CommonCompile(NamedTuple):
    """The flags of a common ``capc compile`` line; every other flag is left out."""

    sources: tuple[str, ...]
    output: str | None
    check: bool


def common_compile(arguments: Sequence[str],
                   environment: Mapping[str, str] = os.environ) -> CommonCompile | None:
    """``arguments`` (argv after the program) as a common compile line, or None for click.

    Proven equal by tests/cli/test_fast_compile.py::test_a_compile_says_and_writes_what_clicks_does.
    """
    if (not arguments or arguments[0] != "compile" or os.name == "nt"
            or environment.get("_CAPC_COMPLETE") or not plain_streams()):
        return None
    sources: list[str] = []
    output: str | None = None
    check = False
    tokens = iter(arguments[1:])
    for token in tokens:
        if token in _OUTPUT_FLAGS and output is None:
            output = next(tokens, "-")  # no value left: refused below, as a flag-like one
            if output.startswith("-"):
                return None
        elif token.startswith(_OUTPUT_EQUALS) and output is None:
            output = token[len(_OUTPUT_EQUALS):]
            if output.startswith("-"):
                return None
        elif token == "--check" and not check:
            check = True
        elif token.startswith("-"):
            return None
        else:
            sources.append(token)
    return CommonCompile(tuple(sources), output, check)


def run_common_compile(call: CommonCompile, kept: list[object] | None = None) -> int:
    """Run ``call`` as ``capc compile`` would with those flags; its exit code. ``kept``: the
    list a process that exits without teardown holds the compile's objects in to the end
    (compiler.build.build)."""
    from compiler.cli.running import CompileRequest
    from compiler.cli.writing import compile_and_write

    def compile_command() -> None:
        compile_and_write(CompileRequest(call.sources), call.output, call.check, None,
                          "text", plain_echo, kept)

    return outcome(lambda: as_click_runs(compile_command), plain_echo)
