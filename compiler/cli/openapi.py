"""The click face of ``capc import openapi SPEC``, next to ``capc import ROWS.json``.

``capc import`` stays one command: :class:`ImportDispatch` hands the arguments to
:data:`openapi_command` when the first one is the word ``openapi``, and to the rows
import otherwise, so every existing ``capc import rows.json ...`` keeps working.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from compiler.cli.options import (
    cache_dir_option,
    cache_option,
    lock_option,
    network_option,
    plugins_option,
    strict_option,
    variables_option,
)
from compiler.report import REPORTERS

_SUBCOMMAND = "openapi"


@click.command("openapi", epilog="""\b
Examples:
  capc import openapi petstore.yaml                          # list the operations
  capc import openapi petstore.yaml --operations listPets 'POST /pets' 'tag:admin*'
  capc import openapi stripe.json --all -o capabilities/stripe --security bearerAuth
  capc import openapi petstore.yaml --check                  # CI: exit 1 on drift""")
@click.argument("spec", metavar="SPEC")
@click.argument("more_selectors", nargs=-1, metavar="[SELECTOR...]")
@click.option("-o", "--output", "output_dir", metavar="DIR", default=None,
              help="Folder of the generated files (default: <first root>/<API title>/).")
@click.option("--operations", "selectors", multiple=True, metavar="SELECTOR",
              help="operationId, 'METHOD /path' or tag:NAME; globs allowed; several may follow.")
@click.option("--all", "take_all", is_flag=True, help="Import every operation.")
@click.option("--server", metavar="URL", default=None,
              help="Base URL to use instead of the document's servers.")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when regenerating would change the files in DIR.")
@click.option("--security", "security", multiple=True, metavar="NAME",
              help="A security scheme of the document to send (repeat for an alternative "
                   "needing several); recorded in the files, reused by --check.")
@click.option("--replace", "--force", "force", is_flag=True,
              help="Replace files in DIR that another document generated, or that an "
                   "OpenAPI import did not generate (--force: the older spelling).")
@click.option("--format", "output_format", type=click.Choice(sorted({"text", "json",
                                                                    *REPORTERS})),
              default="text", show_default=True, help="How lists and diagnostics are printed.")
@click.option("--allow-private-networks/--no-allow-private-networks", default=None,
              help="Allow a server on a loopback or private address (a warning).")
@network_option
@strict_option
@plugins_option
@variables_option
@lock_option
@cache_dir_option
@cache_option
def openapi_command(spec: str, more_selectors: tuple[str, ...], output_dir: str | None,
                    selectors: tuple[str, ...],
                    take_all: bool, server: str | None, security: tuple[str, ...],
                    check: bool, force: bool,
                    output_format: str, allow_private_networks: bool | None,
                    allowed_networks: tuple[str, ...], strict: bool | None,
                    use_plugins: bool | None, variables: tuple[str, ...],
                    lock_file: str | None, cache_dir: str | None, no_cache: bool) -> None:
    """Turn operations of a local OpenAPI document into reviewed capc/v1 api capabilities.

    With neither --operations nor --all, list the operations and write nothing.
    Credentials become ${SETTING} placeholders, listed as the settings to create. The
    tree as it would be after the import is compiled as `capc compile` would (the same
    [tool.capc] options and flags); nothing is written when it has errors. When it writes,
    that compile is left in the compile cache for the next `capc compile` (not --no-cache).
    """
    from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
    from compiler.tree_compile import CompileRequest

    tree = CompileRequest(variables=variables, strict=strict,
                          allow_private_networks=allow_private_networks,
                          use_plugins=use_plugins, lock_file=lock_file,
                          allowed_networks=allowed_networks, use_cache=not no_cache,
                          cache_dir=cache_dir)
    if more_selectors and not selectors:
        raise click.UsageError(f"unexpected argument {more_selectors[0]!r}: selectors follow "
                               "--operations")
    selectors = (*selectors, *more_selectors)
    if take_all and selectors:
        raise click.UsageError("--all and --operations exclude each other")
    outcome = run_import(OpenApiRequest(
        spec=spec, output_dir=output_dir, selectors=tuple(s for s in selectors if s),
        take_all=take_all, server=server, security=security, check=check, force=force,
        tree=tree,
        output_format=output_format, progress=_progress_line()))
    for line in outcome.lines:
        click.echo(line)
    if outcome.diagnostics:
        # One JSON document on stdout: the listing or report when there is one.
        stream = sys.stderr if output_format == "text" or outcome.lines else sys.stdout
        REPORTERS[output_format if output_format in REPORTERS else "text"]().report(
            outcome.diagnostics, stream)
    if outcome.written:
        from compiler.authoring.tree import ensure_editor_schemas

        for path in ensure_editor_schemas():
            click.echo(f"capc: wrote {path.as_posix()} (the schema editors validate against)",
                       err=True)
    if outcome.exit_code:
        sys.exit(outcome.exit_code)


PROGRESS_FROM = 50  # operations: fewer go by too fast for a progress line to help


def _progress_line() -> Callable[[int, int], None] | None:
    """A progress line on stderr when it is a terminal (never in logs or pipes)."""
    if not sys.stderr.isatty():
        return None
    shown = {"last": -1}

    def draw(done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        percent = done * 100 // total
        if percent == shown["last"] and done != total:
            return
        shown["last"] = percent
        end = "\n" if done == total else ""
        sys.stderr.write(f"\rcapc import openapi: {done}/{total} operations ({percent}%){end}")
        sys.stderr.flush()

    return draw


class ImportDispatch(click.Command):
    """``capc import``: the rows import, or ``capc import openapi ...``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Hand ``openapi ...`` to the OpenAPI command; anything else is the rows import's."""
        if args[:1] == [_SUBCOMMAND]:
            # No parent: click would put the rows import's ROWS.json into the usage line.
            ctx.meta["capc.import.openapi"] = openapi_command.make_context(
                f"{ctx.command_path} {_SUBCOMMAND}", args[1:],
                help_option_names=ctx.help_option_names)
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run whichever command the arguments chose."""
        sub = ctx.meta.pop("capc.import.openapi", None)
        if sub is not None:
            with sub:
                return openapi_command.invoke(sub)
        return super().invoke(ctx)
