"""``capc compile`` and ``capc validate``: check a tree, write (or check) its manifest."""

from __future__ import annotations

import sys

import click

from compiler.cli.entry import click_echo
from compiler.cli.options import compile_options
from compiler.cli.running import CompileRequest, compile_tree, failure_exit, report
from compiler.cli.writing import SIGNING_KEY_VARIABLE, compile_and_write

__all__ = ["SIGNING_KEY_VARIABLE", "compile_command", "validate_command"]


@click.command("compile", epilog="""\b
Examples:
  capc compile                          # [tool.capc] roots -> build/manifest.json
  capc compile capabilities -o out.json --plugins
  capc compile --check --format github  # in CI: fail when the manifest is stale""")
@click.argument("sources", nargs=-1)
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Where the manifest is written (default: [tool.capc] output, "
                   "else build/manifest.json).")
@click.option("--check", is_flag=True,
              help="Write nothing; fail when OUTPUT is missing or differs from the sources.")
@click.option("--sign-key", "sign_key", metavar="KEYFILE", default=None,
              help="Sign the manifest with this Ed25519 private key (PEM) into OUTPUT.sig "
                   "(default: the PEM text in $CAPC_SIGNING_KEY, if set).")
@compile_options
def compile_command(sources: tuple[str, ...], output: str | None, variables: tuple[str, ...],
                    strict: bool | None, check: bool, output_format: str,
                    allow_private_networks: bool | None, use_plugins: bool | None,
                    no_cache: bool, cache_dir: str | None, sign_key: str | None,
                    lock_file: str | None, allowed_networks: tuple[str, ...]) -> None:
    """Validate SOURCES (default: [tool.capc] roots, else capabilities/) and write the
    manifest."""
    request = CompileRequest(sources, variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file,
                             allowed_networks=allowed_networks)
    compile_and_write(request, output, check, sign_key, output_format, click_echo)


@click.command("validate", epilog="""\b
Exit codes: 0 no errors (warnings allowed unless --strict), 1 problems found,
2 usage or I/O error (a source or pyproject.toml that cannot be read).
\b
Examples:
  capc validate                       # [tool.capc] roots, else capabilities/
  capc validate --strict capabilities # warnings fail too
  capc validate --format github       # pull-request annotations""")
@click.argument("sources", nargs=-1)
@compile_options
def validate_command(sources: tuple[str, ...], variables: tuple[str, ...], strict: bool | None,
                     output_format: str, allow_private_networks: bool | None,
                     use_plugins: bool | None, no_cache: bool, cache_dir: str | None,
                     lock_file: str | None, allowed_networks: tuple[str, ...]) -> None:
    """Run every check of `capc compile` on SOURCES (default: [tool.capc] roots, else
    capabilities/); write no manifest."""
    request = CompileRequest(sources, variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file,
                             allowed_networks=allowed_networks)
    result = compile_tree(request, output_format=output_format)
    from compiler.plugins import skipped_plugin_note

    note = skipped_plugin_note(use_plugins)
    if note:
        click.echo(note, err=True)
    if output_format == "json":  # SPEC §10: the tools' strict compatibility too
        from compiler.report.strict_tools import report_validation

        report_validation(result.diagnostics, result.manifest, sys.stdout)
    else:
        report(result.diagnostics, output_format)
    if not result.compiled:
        sys.exit(failure_exit(result.diagnostics))
