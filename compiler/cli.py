"""The ``capc`` command line: parse flags, call the pipeline, pick a reporter, exit.

Exit codes: 0 success (warnings allowed), 1 problems found (errors, warnings under
``--strict``, a stale ``--check``), 2 usage or I/O error. No traceback for any input.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from compiler import __version__
from compiler.authoring.openapi.cli_command import ImportDispatch
from compiler.build import build
from compiler.compile_result import CompileOptions, CompileResult
from compiler.diagnostics import Diagnostic, Location, has_errors
from compiler.errors import CapcError, InputOutputError
from compiler.manifest import dump_manifest, read_manifest, write_atomically
from compiler.project import read_project_settings
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
strict_option = click.option(
    "--strict/--no-strict", default=None,
    help="Treat warnings as errors (default: [tool.capc] strict in ./pyproject.toml).")
private_option = click.option(
    "--allow-private-networks/--no-allow-private-networks", default=None,
    help="Loopback and private hosts become warnings (link-local and metadata never do; "
         "default: [tool.capc] allow_private_networks).")
plugins_option = click.option(
    "--plugins/--no-plugins", "use_plugins", default=None,
    help="Check internal capabilities against the installed primethink.tools plugins and "
         "record their tools in the manifest (default: [tool.capc] plugins in ./pyproject.toml).")

validate_plugins_option = click.option(
    "--plugins/--no-plugins", "use_plugins", default=None,
    help="Check internal capabilities and plugin-tool overrides against the installed "
         "primethink.tools plugins (default: [tool.capc] plugins in ./pyproject.toml).")

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


@dataclass(frozen=True, slots=True)
class CompileRequest:
    """What the flags of one command ask a compile for; None means "as [tool.capc] says".

    Built once per command from its flags, so every compile of that command (the stale
    check's second compile included) asks for the same thing.
    """

    sources: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()
    strict: bool | None = None
    allow_private_networks: bool | None = None
    use_plugins: bool | None = None
    use_cache: bool = True
    cache_dir: str | None = None
    lock_file: str | None = None
    use_lock: bool = True


def _compile(request: CompileRequest, output_format: str = "text") -> CompileResult:
    """Run the compile ``request`` asks for (a bad lock file reports and exits 1)."""
    from compiler.plugins import load_catalogue, read_plugin_settings

    project = read_project_settings()
    catalogue = load_catalogue(read_plugin_settings(request.use_plugins))
    pins, lock_path = (_read_lock_option(request.lock_file, output_format) if request.use_lock
                       else (None, ""))
    options = CompileOptions(
        strict=project.strict if request.strict is None else request.strict,
        allow_private_networks=(project.allow_private_networks
                                if request.allow_private_networks is None
                                else request.allow_private_networks),
        plugins_snapshot=catalogue, pins=pins, lock_path=lock_path)
    return build(request.sources or project.roots, request.variables or project.variables,
                 options, use_cache=request.use_cache,
                 cache_dir=Path(request.cache_dir) if request.cache_dir else None)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="capc")
def cli() -> None:
    """capc — compile capability YAML into one frozen, verified manifest."""


@cli.command("compile", epilog="""\b
Examples:
  capc compile                          # [tool.capc] roots -> build/manifest.json
  capc compile capabilities -o out.json --plugins
  capc compile --check --format github  # in CI: fail when the manifest is stale""")
@click.argument("sources", nargs=-1)
@click.option("-o", "--output", default=None, metavar="FILE",
              help=f"Where the manifest is written (default: [tool.capc] output, "
                   f"else {DEFAULT_MANIFEST}).")
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="YAML mapping of template variables for *.yaml.j2 (repeatable; later wins; "
                   "default: [tool.capc] vars).")
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
def compile_command(sources: tuple[str, ...], output: str | None, variables: tuple[str, ...],
                    strict: bool | None, check: bool, output_format: str,
                    allow_private_networks: bool | None, use_plugins: bool | None,
                    no_cache: bool, cache_dir: str | None, sign_key: str | None,
                    lock_file: str | None) -> None:
    """Validate SOURCES (default: [tool.capc] roots, else capabilities/) and write the
    manifest."""
    output = output or read_project_settings().output
    key = _signing_key(sign_key)
    request = CompileRequest(sources, variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file)
    result = _compile(request, output_format)
    diagnostics = result.diagnostics
    if result.manifest is None:
        report(diagnostics, output_format)
        sys.exit(_failure_exit(diagnostics))
    content = dump_manifest(result.manifest)
    target = Path(output)
    if check:
        current = _read_existing(target)
        if current != content:
            stale = Diagnostic.error(Location(output), "stale-manifest", _stale_message(
                output, current, result.manifest, request))
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


@cli.command("keygen", epilog="""\b
Examples:
  capc keygen -o capc-signing.pem      # prints ed25519:BASE64, the key to trust""")
@click.option("-o", "--output", "key_file", required=True, metavar="KEYFILE",
              help="Where the new private key is written (mode 0600; never overwritten).")
def keygen_command(key_file: str) -> None:
    """Create an Ed25519 signing key; print its public key as `ed25519:BASE64`."""
    from compiler.signing import create_key_file

    public_key = create_key_file(Path(key_file))
    click.echo(f"capc keygen: wrote the private key to {key_file} (mode 0600); keep it "
               "secret, trust the public key below", err=True)
    click.echo(public_key.text)


@cli.command("verify", epilog="""\b
Examples:
  capc verify build/manifest.json --public-key "$CAPC_PUBLIC_KEY"
  capc verify m.json --public-key old.pub --public-key new.pub --sig m.json.sig""")
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


def _failure_exit(diagnostics: tuple[Diagnostic, ...]) -> int:
    """2 when a source could not be read (an I/O error, as documented), else 1."""
    return EXIT_USAGE if any(d.code == "io" and d.is_error for d in diagnostics) else EXIT_PROBLEMS


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
        other = _compile(replace(request, strict=False, use_plugins=not enabled))
        return dump_manifest(other.manifest) if other.manifest is not None else None

    return explain_stale(output, current, fresh, enabled, recompile_other_plugins)


@cli.command("validate", epilog="""\b
Exit codes: 0 no errors (warnings allowed unless --strict), 1 problems found,
2 usage or I/O error (a source or pyproject.toml that cannot be read).
\b
Examples:
  capc validate                       # [tool.capc] roots, else capabilities/
  capc validate --strict capabilities # warnings fail too
  capc validate --format github       # pull-request annotations""")
@click.argument("sources", nargs=-1)
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="YAML mapping of template variables for *.yaml.j2 (repeatable; later wins; "
                   "default: [tool.capc] vars).")
@strict_option
@format_option
@private_option
@validate_plugins_option
@cache_option
@cache_dir_option
@lock_option
def validate_command(sources: tuple[str, ...], variables: tuple[str, ...], strict: bool,
                     output_format: str, allow_private_networks: bool,
                     use_plugins: bool | None, no_cache: bool, cache_dir: str | None,
                     lock_file: str | None) -> None:
    """Run every check of `capc compile` on SOURCES (default: [tool.capc] roots, else
    capabilities/); write no manifest."""
    request = CompileRequest(sources, variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file)
    result = _compile(request, output_format)
    report(result.diagnostics, output_format)
    if result.manifest is None:
        sys.exit(_failure_exit(result.diagnostics))


@cli.command("lock", epilog="""\b
Examples:
  capc lock                              # pin every MCP server of capabilities/ in capc.lock
  capc lock --settings settings.yaml     # fill ${NAME} in server URLs and headers
  capc lock --check                      # on a schedule: exit 1 when a server drifted""")
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
    request = CompileRequest(sources, variables, strict=False,
                             allow_private_networks=allow_private_networks, use_plugins=False,
                             use_lock=False)
    result = _compile(request, output_format)
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


@cli.command("schema", epilog="""\b
Examples:
  capc schema                            # the Capability schema on stdout
  capc schema ToolOverride -o override.json
  capc schema --all -o schemas           # every schema, for editors""")
@click.argument("kind", required=False, default="Capability")
@click.option("--all", "all_kinds", is_flag=True, help="Write every schema into DIR.")
@click.option("-o", "--output", metavar="FILE|DIR",
              help="Write the schema to FILE (with --all: every schema into DIR).")
def schema_command(kind: str, all_kinds: bool, output: str | None) -> None:
    """Print the JSON Schema of KIND (Capability, ToolOverride, or Manifest: the file
    `capc compile` writes)."""
    from compiler.schema.kinds import PUBLISHED_SCHEMAS
    from compiler.schema.validation import schema_text

    if all_kinds:
        folder = Path(output or "schemas-out")
        folder.mkdir(parents=True, exist_ok=True)
        for name, file_name in PUBLISHED_SCHEMAS.items():
            write_atomically(folder / file_name, schema_text(name).encode("utf-8"))
            click.echo(str(folder / file_name))
        return
    try:
        text = schema_text(kind)
    except KeyError:
        import difflib

        close = difflib.get_close_matches(kind, list(PUBLISHED_SCHEMAS), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise click.UsageError(f"unknown kind {kind!r}{hint} (supported: "
                               + ", ".join(PUBLISHED_SCHEMAS) + ")") from None
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomically(Path(output), text.encode("utf-8"))
    click.echo(output)


@cli.command("explain", epilog="""\b
Examples:
  capc explain get_weather
  capc explain memory__remember -m build/manifest.json""")
@click.argument("tool")
@click.option("-m", "--manifest", "manifest_path", default=DEFAULT_MANIFEST, show_default=True)
def explain_command(tool: str, manifest_path: str) -> None:
    """Show TOOL's final descriptor and where each part came from."""
    from compiler.review.explain import explain_tool, unknown_tool_message

    manifest = read_manifest(manifest_path)
    text = explain_tool(manifest, tool)
    if text is None:
        click.echo(escape_control(
            f"capc: {unknown_tool_message(manifest, tool, manifest_path)}"), err=True)
        sys.exit(EXIT_PROBLEMS)
    click.echo(text, nl=False)


@cli.command("diff", epilog="""\b
Examples:
  capc diff old.json new.json
  capc diff --git origin/main.. --format markdown    # the working tree vs main
  capc diff --git v1..v2 --fail-on security""")
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
    from compiler.review.diff_report import RENDERERS, diff_files, diff_revisions

    if git_range is not None:
        diff = diff_revisions(git_range, manifests or DEFAULT_SOURCES, variable_files=variables)
    elif len(manifests) == 2:
        diff = diff_files(manifests[0], manifests[1])
    else:
        raise click.UsageError("capc diff wants two manifests, OLD and NEW (or --git REV1..REV2)")
    click.echo(RENDERERS[output_format](diff), nl=False)
    # --exit-code: anything changed; --fail-on security: a change that lets an agent reach more.
    failed = (exit_code and diff.has_changes) or (fail_on == "security" and bool(diff.security))
    sys.exit(EXIT_PROBLEMS if failed else EXIT_OK)


@cli.command("migrate", epilog="""\b
Examples:
  capc migrate --dry-run        # show the rewrite of legacy rows as a diff
  capc migrate capabilities     # rewrite them in place, then run every check""")
@click.argument("sources", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Print the changes as a unified diff; write nothing.")
@click.option("--vars", "variables", multiple=True, metavar="FILE",
              help="Template variables for checking *.yaml.j2 afterwards (default: [tool.capc] "
                   "vars; without any, templates are not checked).")
@format_option
def migrate_command(sources: tuple[str, ...], dry_run: bool, variables: tuple[str, ...],
                    output_format: str) -> None:
    """Rewrite legacy rows under SOURCES (default: [tool.capc] roots) to capc/v1, in place,
    then run every check of `capc validate` on the result and report it."""
    from compiler.authoring.migrate import migrate_files

    project = read_project_settings()
    roots = sources or project.roots
    outcome = migrate_files(roots, dry_run=dry_run)
    if dry_run:
        click.echo(outcome.diff, nl=False)
    verb = "would migrate" if dry_run else "migrated"
    click.echo(f"capc migrate: {verb} {outcome.migrated_documents} document(s) in "
               f"{len(outcome.changed_paths)} file(s)", err=True)
    # The compiler upgrades legacy rows in memory exactly as migrate rewrites them, so the
    # checks of the tree as it is (dry run) or as written are the checks of the result.
    variables = variables or project.variables
    checked_roots = roots
    if not variables:  # a template cannot be rendered (so checked) without its variables
        from compiler.source.discovery import discover

        checked_roots = tuple(source.display_path for source in discover(list(roots))
                              if not source.is_template)
    checked = (_compile(CompileRequest(checked_roots, variables)).diagnostics
               if checked_roots else ())
    diagnostics = tuple(sorted({*outcome.diagnostics, *checked}))
    report(diagnostics, output_format)
    if has_errors(diagnostics):
        sys.exit(EXIT_PROBLEMS)


@cli.command("import", cls=ImportDispatch, epilog="""\b
Examples:
  capc import capabilities-export.json             # into capabilities/{api,internal,mcp}/
  capc import rows.json -o capabilities --force    # replace codes that already exist
  capc import openapi petstore.yaml --all          # OpenAPI: see capc import openapi --help""")
@click.argument("rows_file", metavar="ROWS.json")
@click.option("-o", "--output", "output_dir", default="capabilities", show_default=True,
              metavar="DIR", help="Folder the capability files are written into.")
@click.option("--force", is_flag=True,
              help="Replace the files of codes (and files) that already exist.")
@format_option
@private_option
def import_command(rows_file: str, output_dir: str, force: bool, output_format: str,
                   allow_private_networks: bool | None) -> None:
    """Turn a JSON export of the reference's capabilities table into capc/v1 YAML files.

    Files go into DIR/api, DIR/internal and DIR/mcp. A code the tree ([tool.capc] roots
    and DIR) already defines is refused; --force replaces its file. The tree as it would
    be after the import is compiled first: nothing is written when it has errors.
    """
    from compiler.authoring.import_tree import plan_import
    from compiler.authoring.importer import import_rows, write_imported
    from compiler.authoring.tree import ensure_editor_schemas, schema_reference_from

    try:
        text = Path(rows_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise InputOutputError(f"{rows_file}: cannot read: {reason}") from None
    project = read_project_settings()
    if allow_private_networks is None:
        allow_private_networks = project.allow_private_networks
    options = CompileOptions(allow_private_networks=allow_private_networks)
    result = import_rows(text, rows_file, schema_reference_from(Path(output_dir)), options)
    if has_errors(result.diagnostics):
        report(result.diagnostics, output_format)
        sys.exit(EXIT_PROBLEMS)
    plan = plan_import(result, output_dir, project.roots, force=force, options=options)
    if plan.problems:
        report((*result.diagnostics, *plan.problems), output_format)
        sys.exit(EXIT_PROBLEMS)
    for replaced in plan.removed:
        replaced.unlink()
        click.echo(f"capc import: replaced {replaced.as_posix()}", err=True)
    written, problems = write_imported(result, output_dir, force=force)
    for path in written:
        click.echo(path)
    if written:
        _echo_schemas(ensure_editor_schemas())
    report((*result.diagnostics, *problems), output_format)
    if problems:
        sys.exit(EXIT_PROBLEMS)


def _echo_schemas(written: list[Path]) -> None:
    for path in written:
        click.echo(f"capc: wrote {path.as_posix()} (the schema editors validate against)",
                   err=True)


@cli.command("plugins", epilog="""\b
Examples:
  capc plugins
  capc plugins --format json""")
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


@cli.command("new", epilog="""\b
Examples:
  capc new api get_invoice      # capabilities/api/get_invoice.yaml
  capc new internal memory      # filled from the plugin that registers "memory"
  capc new mcp wiki -o capabilities/mcp/wiki.yaml""")
@click.argument("kind", type=click.Choice(["internal", "api", "mcp"]))
@click.argument("name")
@click.option("-o", "--output", metavar="FILE",
              help="Where to write (default: capabilities/KIND/NAME.yaml); never overwritten.")
def new_command(kind: str, name: str, output: str | None) -> None:
    """Scaffold a capability file; `internal` ones are filled from the installed plugins.

    Refuses a code the tree ([tool.capc] roots) already defines, and writes schemas/ next
    to the tree when it is missing or outdated, so the file's schema modeline resolves.
    """
    from compiler.authoring.scaffold import (
        default_path,
        refuse_existing_code,
        scaffold,
        write_scaffold,
    )
    from compiler.authoring.tree import ensure_editor_schemas
    from compiler.plugins import discover_catalogue, read_plugin_settings

    path = Path(output) if output else default_path(kind, name)
    refuse_existing_code(name, (*read_project_settings().roots, path.parent.as_posix()))
    catalogue = (discover_catalogue(read_plugin_settings(True).timeout)
                 if kind == "internal" else None)
    written = scaffold(kind, name, path, catalogue)
    write_scaffold(written)
    click.echo(written.path.as_posix())
    _echo_schemas(ensure_editor_schemas())


@cli.command("docs", epilog="""\b
Examples:
  capc docs > CAPABILITIES.md
  capc docs -m build/manifest.json -o docs/capabilities.md""")
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
