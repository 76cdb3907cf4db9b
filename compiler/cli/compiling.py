"""``capc compile`` and ``capc validate``: check a tree, write (or check) its manifest."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from compiler.cli.options import compile_options
from compiler.cli.running import CompileRequest, failure_exit, report, run_compile
from compiler.diagnostics import Diagnostic, Location
from compiler.errors import ExitCode, InputOutputError
from compiler.manifest import dump_manifest, write_atomically
from compiler.project import read_project_settings
from compiler.report.escape import escape_control

if TYPE_CHECKING:
    from compiler.signing import SigningKey


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
    output = output or read_project_settings().output
    key = _signing_key(sign_key)
    request = CompileRequest(sources, variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file,
                             allowed_networks=allowed_networks)
    result = run_compile(request, output_format)
    diagnostics = result.diagnostics
    if result.manifest is None:
        report(diagnostics, output_format)
        sys.exit(failure_exit(diagnostics))
    content = result.file_bytes()
    target = Path(output)
    if check:
        current = _read_existing(target)
        if current != content:
            stale = Diagnostic.error(Location(output), "stale-manifest", _stale_message(
                output, current, result.manifest, request))
            report((*diagnostics, stale), output_format)
            sys.exit(ExitCode.PROBLEMS)
        unsigned = _signature_problem(target, result.manifest, key) if key else None
        if unsigned is not None:
            report((*diagnostics, unsigned), output_format)
            sys.exit(ExitCode.PROBLEMS)
        report(diagnostics, output_format)
        return
    write_atomically(target, content)
    wrote = f"capc: wrote {output}"
    if key is not None:
        from compiler.runtime.manifest.format import compute_digest
        from compiler.runtime.manifest.signature import signature_path_for

        signature = key.sign(compute_digest(result.manifest))
        write_atomically(signature_path_for(target), signature.to_bytes())
        wrote += f" and its signature {signature_path_for(target)} ({key.public_key})"
    # stdout with the text reporter (its diagnostics are on stderr); machine formats own stdout.
    click.echo(escape_control(wrote), err=output_format != "text")
    report(diagnostics, output_format)


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
    result = run_compile(request, output_format)
    from compiler.plugins import skipped_plugin_note

    note = skipped_plugin_note(use_plugins)
    if note:
        click.echo(note, err=True)
    if output_format == "json":  # SPEC §10: the tools' strict compatibility too
        from compiler.report.strict_tools import report_validation

        report_validation(result.diagnostics, result.manifest, sys.stdout)
    else:
        report(result.diagnostics, output_format)
    if result.manifest is None:
        sys.exit(failure_exit(result.diagnostics))


SIGNING_KEY_VARIABLE = "CAPC_SIGNING_KEY"  # compiler.signing.SIGNING_KEY_ENV (a test checks)


def _signing_key(key_file: str | None) -> SigningKey | None:
    """The key of --sign-key or $CAPC_SIGNING_KEY, read before anything is compiled."""
    if key_file is None and not os.environ.get(SIGNING_KEY_VARIABLE, "").strip():
        return None  # no key asked for (load_signing_key's rule): no signing code imported
    from compiler.signing import load_signing_key

    return load_signing_key(key_file, os.environ)


def _signature_problem(target: Path, manifest: dict[str, object], key: SigningKey
                       ) -> Diagnostic | None:
    """A stale-signature error when TARGET.sig is not ``key``'s signature of TARGET."""
    from compiler.runtime.manifest.format import compute_digest
    from compiler.runtime.manifest.signature import signature_path_for
    from compiler.signing import signature_problem

    signature_path = signature_path_for(target)
    problem = signature_problem(signature_path, compute_digest(manifest), key)
    if problem is None:
        return None
    return Diagnostic.error(
        Location(str(signature_path)), "stale-signature",
        f"{signature_path} does not sign {target} with {key.public_key}: {problem}; run "
        "`capc compile` with the key to re-sign")


def _read_existing(target: Path) -> bytes | None:
    try:
        return target.read_bytes() if target.is_file() else None
    except OSError as error:
        raise InputOutputError(f"{target}: cannot read: {error.strerror or error}") from None


def _stale_message(output: str, current: bytes | None, fresh: dict[str, Any],
                   request: CompileRequest) -> str:
    from compiler.plugins import read_plugin_settings
    from compiler.review.stale import explain_stale

    enabled = read_plugin_settings(request.use_plugins).enabled

    def recompile_other_plugins() -> bytes | None:
        # Not strict: warnings do not change the bytes, and the other setting may warn.
        other = run_compile(replace(request, strict=False, use_plugins=not enabled))
        return dump_manifest(other.manifest) if other.manifest is not None else None

    return explain_stale(output, current, fresh, enabled, recompile_other_plugins)
