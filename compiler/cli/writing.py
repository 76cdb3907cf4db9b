"""What ``capc compile`` does once its flags are parsed: compile, then write the manifest
(or, with ``--check``, compare it), sign it, report.

No click here: the click command (``compiler.cli.compiling``) and the common-form fast
path (``compiler.cli.fast_compile``) both call :func:`compile_and_write`, each with its own way of
printing a line.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.cli.entry import Echo
from compiler.cli.running import CompileRequest, compile_tree, failure_exit, report
from compiler.diagnostics import Code, Diagnostic, Location
from compiler.errors import ExitCode, InputOutputError
from compiler.manifest import dump_manifest, write_atomically
from compiler.project import read_project_settings
from compiler.report.escape import escape_control

if TYPE_CHECKING:
    from compiler.signing import SigningKey

STALE_MANIFEST = Code("stale-manifest", "the manifest on disk is not what the tree compiles to")
STALE_SIGNATURE = Code("stale-signature", "the manifest's signature does not sign it")
CODES = (STALE_MANIFEST, STALE_SIGNATURE)


def compile_and_write(request: CompileRequest, output: str | None, check: bool,
                      sign_key: str | None, output_format: str, echo: Echo,
                      kept: list[object] | None = None) -> None:
    """Compile what ``request`` asks for and write the manifest to ``output`` (default:
    [tool.capc] output), or with ``check`` fail when the file there differs. ``kept``: the
    process's list of what it holds to its exit (compiler.build.build)."""
    output = output or read_project_settings().output
    key = _signing_key(sign_key)
    result = compile_tree(request, output_format=output_format, kept=kept)
    diagnostics = result.diagnostics
    if not result.compiled:
        report(diagnostics, output_format)
        sys.exit(failure_exit(diagnostics))
    target = Path(output)
    if check:
        current = _read_existing(target)
        if current != result.file_bytes():
            stale = Diagnostic.error(Location(output), STALE_MANIFEST, _stale_message(
                output, current, result.compiled_manifest(), request))
            report((*diagnostics, stale), output_format)
            sys.exit(ExitCode.PROBLEMS)
        unsigned = _signature_problem(target, result.compiled_manifest(), key) if key else None
        if unsigned is not None:
            report((*diagnostics, unsigned), output_format)
            sys.exit(ExitCode.PROBLEMS)
        report(diagnostics, output_format)
        return
    write_atomically(target, result.file_pieces())  # in pieces: never joined whole
    wrote = f"capc: wrote {output}"
    if key is not None:
        from compiler.runtime.manifest.format import compute_digest
        from compiler.runtime.manifest.signature import signature_path_for

        signature = key.sign(compute_digest(result.compiled_manifest()))
        write_atomically(signature_path_for(target), signature.to_bytes())
        wrote += f" and its signature {signature_path_for(target)} ({key.public_key})"
    # stdout with the text reporter (its diagnostics are on stderr); machine formats own stdout.
    echo(escape_control(wrote), output_format != "text")
    report(diagnostics, output_format)


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
        Location(str(signature_path)), STALE_SIGNATURE,
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
        other = compile_tree(replace(request, strict=False, use_plugins=not enabled))
        return dump_manifest(other.manifest) if other.manifest is not None else None

    return explain_stale(output, current, fresh, enabled, recompile_other_plugins)
