"""The ``capc`` command line: parse flags, call the pipeline, pick a reporter, exit.

Exit codes: 0 success (warnings allowed), 1 problems found (errors, warnings under
``--strict``, a stale ``--check``), 2 usage or I/O error. No traceback for any input.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from compiler import __version__
from compiler.build import build
from compiler.compile_result import CompileOptions, CompileResult
from compiler.diagnostics import Diagnostic, Location, has_errors
from compiler.errors import CapcError
from compiler.manifest import dump_manifest, read_manifest, write_atomically
from compiler.report import REPORTERS
from compiler.report.escape import escape_control

if TYPE_CHECKING:
    from compiler.signing import SigningKey

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
DEFAULT_SOURCES = ("capabilities",)
DEFAULT_MANIFEST = "build/manifest.json"

format_option = click.option(
    "--format", "output_format", type=click.Choice(sorted(REPORTERS)), default="text",
    show_default=True, help="How diagnostics are printed.")
strict_option = click.option("--strict", is_flag=True, help="Treat warnings as errors.")
private_option = click.option(
    "--allow-private-networks", is_flag=True,
    help="Loopback and private hosts become warnings (link-local and metadata never do).")
plugins_option = click.option(
    "--plugins/--no-plugins", "use_plugins", default=None,
    help="Check internal capabilities against the installed primethink.tools plugins and "
         "record their tools in the manifest (default: [tool.capc] plugins in ./pyproject.toml).")

cache_option = click.option(
    "--no-cache", "no_cache", is_flag=True,
    help="Do not read or write the compile cache (also: CAPC_NO_CACHE=1).")
cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
    help="Where cached results live (default: $CAPC_CACHE_DIR, else capc in the user cache "
         "directory; entries are HMAC-authenticated, so a planted one is ignored).")


lock_option = click.option(
    "--lock", "lock_file", default=None, metavar="FILE",
    help="The lock of pinned MCP tools (default: ./capc.lock when it exists).")


def report(diagnostics: tuple[Diagnostic, ...], output_format: str) -> None:
    """Print diagnostics with the chosen reporter (text on stderr, machine formats on stdout)."""
    stream = sys.stderr if output_format == "text" else sys.stdout
    REPORTERS[output_format]().report(diagnostics, stream)


def _read_lock_option(lock_file: str | None, output_format: str) -> tuple[Any, str]:
    """The lock's servers (None: no lock) and its path; a bad lock reports and exits 1."""
    from compiler.pins.lockfile import DEFAULT_LOCK

    path = lock_file or DEFAULT_LOCK
    if lock_file is None and not Path(path).is_file():
        return None, path
    from compiler.pins.lockfile import read_lock

    servers, problems = read_lock(path)
    if servers is None:
        report(tuple(problems), output_format)
        sys.exit(EXIT_PROBLEMS)
    return servers, path


def _compile(sources: tuple[str, ...], variables: tuple[str, ...], strict: bool,
             allow_private: bool, use_plugins: bool | None, no_cache: bool,
             cache_dir: str | None, lock_file: str | None = None,
             output_format: str = "text", use_lock: bool = True) -> CompileResult:
    from compiler.plugins import load_catalogue, read_plugin_settings

    catalogue = load_catalogue(read_plugin_settings(use_plugins))
    pins, lock_path = (_read_lock_option(lock_file, output_format) if use_lock
                       else (None, ""))
    options = CompileOptions(strict=strict, allow_private_networks=allow_private,
                             plugins_snapshot=catalogue, pins=pins, lock_path=lock_path)
    return build(sources or DEFAULT_SOURCES, variables, options, use_cache=not no_cache,
                 cache_dir=Path(cache_dir) if cache_dir else None)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="capc")
def cli() -> None:
    """capc — compile capability YAML into one frozen, verified manifest."""


@cli.command("compile")
@click.argument("sources", nargs=-1)
@click.option("-o", "--output", default=DEFAULT_MANIFEST, show_default=True,
              help="Where the manifest is written.")
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="YAML mapping of template variables for *.yaml.j2 (repeatable; later wins).")
@strict_option
@click.option("--check", is_flag=True,
              help="Write nothing; fail when OUTPUT is missing or differs from the sources.")
@format_option
@private_option
@plugins_option
@cache_option
@cache_dir_option
@click.option("--sign-key", "sign_key", metavar="KEYFILE", default=None,
              help="Sign the manifest with this Ed25519 private key (PEM) into OUTPUT.sig "
                   "(default: the PEM text in $CAPC_SIGNING_KEY, if set).")
@lock_option
def compile_command(sources: tuple[str, ...], output: str, variables: tuple[str, ...],
                    strict: bool, check: bool, output_format: str,
                    allow_private_networks: bool, use_plugins: bool | None, no_cache: bool,
                    cache_dir: str | None, sign_key: str | None, lock_file: str | None) -> None:
    """Validate SOURCES (default: capabilities/) and write the manifest."""
    key = _signing_key(sign_key)
    result = _compile(sources, variables, strict, allow_private_networks, use_plugins,
                      no_cache, cache_dir, lock_file, output_format)
    diagnostics = result.diagnostics
    if result.manifest is None:
        report(diagnostics, output_format)
        sys.exit(EXIT_PROBLEMS)
    content = dump_manifest(result.manifest)
    target = Path(output)
    if check:
        current = target.read_bytes() if target.is_file() else None
        if current != content:
            reason = ("is missing" if current is None else
                      "differs from what the sources compile to")
            stale = Diagnostic.error(Location(output), "stale-manifest",
                                     f"{output} {reason}: run `capc compile` and commit it")
            report((*diagnostics, stale), output_format)
            sys.exit(EXIT_PROBLEMS)
        unsigned = _signature_problem(target, result.manifest, key) if key else None
        if unsigned is not None:
            report((*diagnostics, unsigned), output_format)
            sys.exit(EXIT_PROBLEMS)
        report(diagnostics, output_format)
        return
    write_atomically(target, content)
    if key is not None:
        from compiler.runtime.manifest.format import compute_digest
        from compiler.runtime.manifest.signature import signature_path_for

        signature = key.sign(compute_digest(result.manifest))
        write_atomically(signature_path_for(target), signature.to_bytes())
    report(diagnostics, output_format)


def _signing_key(key_file: str | None) -> SigningKey | None:
    """The key of --sign-key or $CAPC_SIGNING_KEY, read before anything is compiled."""
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


@cli.command("keygen")
@click.option("-o", "--output", "key_file", required=True, metavar="KEYFILE",
              help="Where the new private key is written (mode 0600; never overwritten).")
def keygen_command(key_file: str) -> None:
    """Create an Ed25519 signing key; print its public key as `ed25519:BASE64`."""
    from compiler.signing import create_key_file

    public_key = create_key_file(Path(key_file))
    click.echo(f"capc keygen: wrote the private key to {key_file} (mode 0600); keep it "
               "secret, trust the public key below", err=True)
    click.echo(public_key.text)


@cli.command("verify")
@click.argument("manifest_path", metavar="MANIFEST")
@click.option("--public-key", "public_keys", multiple=True, required=True, metavar="KEY",
              help="A trusted key: `ed25519:BASE64` or a PEM public key file (repeatable).")
@click.option("--sig", "signature_file", metavar="FILE",
              help="The signature file (default: MANIFEST.sig).")
def verify_command(manifest_path: str, public_keys: tuple[str, ...],
                   signature_file: str | None) -> None:
    """Check that MANIFEST's digest is valid and signed by one of the --public-key keys.

    Exits 0 when it is, 1 naming the failed check otherwise, 2 for a key that cannot be read.
    """
    from compiler.runtime.errors import ManifestError as RefusedManifest
    from compiler.runtime.manifest.read import read_verified_document
    from compiler.runtime.manifest.signature import (
        PublicKeyError,
        check_signature,
        parse_trusted_keys,
        read_signature,
        signature_path_for,
    )

    try:
        trusted = parse_trusted_keys(public_keys)
    except PublicKeyError as error:
        raise click.UsageError(f"--public-key: {error}") from None
    signature_path = Path(signature_file) if signature_file else signature_path_for(
        manifest_path)
    try:
        digest = str(read_verified_document(manifest_path)["digest"])
        signature = read_signature(signature_path, manifest_path)
        check_signature(manifest_path, digest, signature, trusted)
    except RefusedManifest as refused:
        click.echo(f"capc verify: {refused}", err=True)
        sys.exit(EXIT_PROBLEMS)
    click.echo(f"{manifest_path}: verified: digest {digest}, signed by {signature.public_key}")


@cli.command("validate")
@click.argument("sources", nargs=-1)
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="YAML mapping of template variables (repeatable; later wins).")
@strict_option
@format_option
@private_option
@plugins_option
@cache_option
@cache_dir_option
@lock_option
def validate_command(sources: tuple[str, ...], variables: tuple[str, ...], strict: bool,
                     output_format: str, allow_private_networks: bool,
                     use_plugins: bool | None, no_cache: bool, cache_dir: str | None,
                     lock_file: str | None) -> None:
    """Run every check on SOURCES; write nothing."""
    result = _compile(sources, variables, strict, allow_private_networks, use_plugins,
                      no_cache, cache_dir, lock_file, output_format)
    report(result.diagnostics, output_format)
    if result.manifest is None:
        sys.exit(EXIT_PROBLEMS)


@cli.command("lock")
@click.argument("sources", nargs=-1)
@click.option("--lock", "lock_file", default="capc.lock", show_default=True, metavar="FILE",
              help="The lock file to write (or compare with --check).")
@click.option("--settings", "settings_file", metavar="FILE",
              help="YAML mapping NAME: value filling ${NAME} in server URLs and headers "
                   "(else $CAPC_SETTING_NAME).")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when a live listing differs from the lock.")
@click.option("--timeout", type=click.FloatRange(0.1, 300.0), default=30.0, show_default=True,
              help="Seconds one server may take to list its tools.")
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="Template variables for *.yaml.j2 (repeatable; later wins).")
@private_option
@format_option
def lock_command(sources: tuple[str, ...], lock_file: str, settings_file: str | None,
                 check: bool, timeout: float, variables: tuple[str, ...],
                 allow_private_networks: bool, output_format: str) -> None:
    """Pin the tools of every MCP server of SOURCES in a lock file (capc.lock)."""
    from compiler.pins.command import read_settings, run_lock

    settings, problems = read_settings(settings_file)
    if problems:
        report(tuple(problems), output_format)
        sys.exit(EXIT_USAGE)
    result = _compile(sources, variables, False, allow_private_networks, False, False, None,
                      output_format=output_format, use_lock=False)
    if result.manifest is None:
        report(result.diagnostics, output_format)
        sys.exit(EXIT_PROBLEMS)
    outcome = run_lock(result.manifest, lock_file, settings, check=check,
                       allow_private_networks=allow_private_networks, timeout=timeout)
    if outcome.diagnostics:
        report(outcome.diagnostics, output_format)
    for line in outcome.out:
        click.echo(line)
    for line in outcome.err:
        click.echo(line, err=True)
    sys.exit(outcome.exit_code)


@cli.command("schema")
@click.argument("kind", required=False, default="Capability")
@click.option("--all", "all_kinds", is_flag=True, help="Write every schema into DIR.")
@click.option("-o", "--output", "output_dir", metavar="DIR", help="Folder for --all.")
def schema_command(kind: str, all_kinds: bool, output_dir: str | None) -> None:
    """Print the JSON Schema of KIND (Capability, ToolOverride, or Manifest: the file
    `capc compile` writes)."""
    from compiler.schema.kinds import PUBLISHED_SCHEMAS
    from compiler.schema.validation import schema_text

    if all_kinds:
        folder = Path(output_dir or "schemas-out")
        folder.mkdir(parents=True, exist_ok=True)
        for name, file_name in PUBLISHED_SCHEMAS.items():
            (folder / file_name).write_text(schema_text(name), encoding="utf-8")
            click.echo(str(folder / file_name))
        return
    try:
        click.echo(schema_text(kind), nl=False)
    except KeyError:
        raise click.UsageError(f"unknown kind {kind!r}; supported: "
                               + ", ".join(PUBLISHED_SCHEMAS)) from None


@cli.command("explain")
@click.argument("tool")
@click.option("-m", "--manifest", "manifest_path", default=DEFAULT_MANIFEST, show_default=True)
def explain_command(tool: str, manifest_path: str) -> None:
    """Show TOOL's final descriptor and where each part came from."""
    from compiler.review.explain import explain_tool

    text = explain_tool(read_manifest(manifest_path), tool)
    if text is None:
        click.echo(escape_control(f"capc: no tool {tool!r} in {manifest_path}"), err=True)
        sys.exit(EXIT_PROBLEMS)
    click.echo(text, nl=False)


@cli.command("diff")
@click.argument("manifests", nargs=-1, metavar="OLD NEW")
@click.option("--format", "output_format", type=click.Choice(["text", "markdown", "json"]),
              default="text", show_default=True, help="text, markdown (PR comment) or json.")
@click.option("--exit-code", "exit_code", is_flag=True, help="Exit 1 when anything changed.")
@click.option("--fail-on", type=click.Choice(["security"]),
              help="Exit 1 when a security-relevant change is present.")
@click.option("--git", "git_range", metavar="REV1..REV2",
              help="Compile the sources (the arguments, default capabilities/) at two git "
                   "revisions and compare those; REV2 empty means the working tree.")
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="Template variables for --git compiles (repeatable; later wins).")
def diff_command(manifests: tuple[str, ...], output_format: str, exit_code: bool,
                 fail_on: str | None, git_range: str | None,
                 variables: tuple[str, ...]) -> None:
    """Show what changed between manifests OLD and NEW, security-relevant changes first."""
    from compiler.review.diff_report import run_diff, run_git_diff

    if git_range is not None:
        text, code = run_git_diff(git_range, manifests or DEFAULT_SOURCES,
                                  output_format=output_format, exit_code=exit_code,
                                  fail_on=fail_on, variable_files=variables)
    elif len(manifests) == 2:
        text, code = run_diff(manifests[0], manifests[1], output_format=output_format,
                              exit_code=exit_code, fail_on=fail_on)
    else:
        raise click.UsageError("capc diff wants two manifests, OLD and NEW (or --git REV1..REV2)")
    click.echo(text, nl=False)
    sys.exit(code)


@cli.command("migrate")
@click.argument("sources", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Print the changes as a unified diff; write nothing.")
@format_option
def migrate_command(sources: tuple[str, ...], dry_run: bool, output_format: str) -> None:
    """Rewrite legacy rows under SOURCES (default: capabilities/) to capc/v1, in place."""
    from compiler.authoring.migrate import migrate_files

    outcome = migrate_files(sources or DEFAULT_SOURCES, dry_run=dry_run)
    if dry_run:
        click.echo(outcome.diff, nl=False)
    verb = "would migrate" if dry_run else "migrated"
    click.echo(f"capc migrate: {verb} {outcome.migrated_documents} document(s) in "
               f"{len(outcome.changed_paths)} file(s)", err=True)
    report(outcome.diagnostics, output_format)
    if has_errors(outcome.diagnostics):
        sys.exit(EXIT_PROBLEMS)


@cli.command("import")
@click.argument("rows_file", metavar="ROWS.json")
@click.option("-o", "--output", "output_dir", default="capabilities", show_default=True,
              metavar="DIR", help="Folder the capability files are written into.")
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@format_option
@private_option
def import_command(rows_file: str, output_dir: str, force: bool, output_format: str,
                   allow_private_networks: bool) -> None:
    """Turn a JSON export of the reference's capabilities table into capc/v1 YAML files."""
    from compiler.authoring.importer import import_rows, schema_reference, write_imported
    from compiler.errors import InputOutputError

    try:
        text = Path(rows_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputOutputError(f"{rows_file}: cannot read: {error}") from None
    options = CompileOptions(allow_private_networks=allow_private_networks)
    result = import_rows(text, rows_file, schema_reference(output_dir), options)
    if has_errors(result.diagnostics):
        report(result.diagnostics, output_format)
        sys.exit(EXIT_PROBLEMS)
    written, problems = write_imported(result, output_dir, force=force)
    for path in written:
        click.echo(path)
    report((*result.diagnostics, *problems), output_format)
    if problems:
        sys.exit(EXIT_PROBLEMS)


@cli.command("plugins")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text, or the catalogue as JSON.")
def plugins_command(output_format: str) -> None:
    """List the installed tool plugins: their codes, names, descriptions and tools.

    Exits 1 when a plugin failed to load (it is listed with the reason).
    """
    import json

    from compiler.plugins import discover_catalogue, read_plugin_settings, render_catalogue_text

    catalogue = discover_catalogue(read_plugin_settings(True).timeout)
    if output_format == "json":
        click.echo(json.dumps(catalogue, sort_keys=True, indent=2, ensure_ascii=False))
    else:
        click.echo(render_catalogue_text(catalogue), nl=False)
    if catalogue["failures"]:
        sys.exit(EXIT_PROBLEMS)


@cli.command("new")
@click.argument("kind", type=click.Choice(["internal", "api", "mcp"]))
@click.argument("name")
@click.option("-o", "--output", metavar="FILE",
              help="Where to write (default: capabilities/KIND/NAME.yaml); never overwritten.")
def new_command(kind: str, name: str, output: str | None) -> None:
    """Scaffold a capability file; `internal` ones are filled from the installed plugins."""
    from compiler.authoring.scaffold import default_path, scaffold, write_scaffold
    from compiler.plugins import discover_catalogue, read_plugin_settings

    path = Path(output) if output else default_path(kind, name)
    catalogue = (discover_catalogue(read_plugin_settings(True).timeout)
                 if kind == "internal" else None)
    written = scaffold(kind, name, path, catalogue)
    write_scaffold(written)
    click.echo(written.path.as_posix())


@cli.command("docs")
@click.option("-m", "--manifest", "manifest_path", default=DEFAULT_MANIFEST, show_default=True)
@click.option("-o", "--output", metavar="FILE", help="Write the catalogue here (default: stdout).")
def docs_command(manifest_path: str, output: str | None) -> None:
    """Write a Markdown catalogue of the manifest's capabilities and tools."""
    from compiler.review.docs import render_catalogue

    text = render_catalogue(read_manifest(manifest_path))
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomically(Path(output), text.encode("utf-8"))


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


def main() -> None:
    """Console entry point: run the group and map every failure to an exit code."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.exceptions.Abort:
        click.echo("capc: aborted", err=True)
        sys.exit(EXIT_PROBLEMS)
    except click.ClickException as error:
        error.show(file=_EscapingStream(sys.stderr))  # type: ignore[arg-type]
        sys.exit(EXIT_USAGE)
    except CapcError as error:
        click.echo(escape_control(f"capc: {error}"), err=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except RecursionError:  # a hostile manifest nested just shallow enough to parse
        click.echo("capc: input nested too deeply to process", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as error:  # writing an output (a folder, read-only, no space...)
        where = f"{error.filename}: " if error.filename else ""
        click.echo(escape_control(f"capc: {where}{error.strerror or error}"), err=True)
        sys.exit(EXIT_USAGE)
    except Exception as error:
        click.echo(escape_control(
            f"capc: internal error ({type(error).__name__}: {error}); this is a bug in "
            f"capc {__version__}: please report it with the input that caused it"), err=True)
        sys.exit(EXIT_USAGE)
