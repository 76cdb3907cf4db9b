"""The authoring commands: ``capc new``, ``capc import`` and ``capc migrate``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compiler.cli.openapi import ImportDispatch
from compiler.cli.options import format_option, network_option, private_option, variables_option
from compiler.cli.running import CompileRequest, compile_options_for, compile_tree, report
from compiler.diagnostics import has_errors
from compiler.errors import ProblemsFound
from compiler.project import DEFAULT_ROOTS, read_project_settings
from compiler.report.escape import escape_control


@click.command("migrate", epilog="""\b
Examples:
  capc migrate --dry-run        # show the rewrite of legacy rows as a diff
  capc migrate capabilities     # rewrite them in place, then run every check""")
@click.argument("sources", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Print the changes as a unified diff; write nothing.")
@variables_option
@format_option()
def migrate_command(sources: tuple[str, ...], dry_run: bool, variables: tuple[str, ...],
                    output_format: str) -> None:
    """Rewrite legacy rows under SOURCES (default: [tool.capc] roots) to capc/v1, in place,
    then run every check of `capc validate` on the result and report it.

    Templates are checked only with variables (--vars or [tool.capc] vars).
    """
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
    checked = (compile_tree(CompileRequest(checked_roots, variables)).diagnostics
               if checked_roots else ())
    diagnostics = tuple(sorted({*outcome.diagnostics, *checked}))
    report(diagnostics, output_format)
    if has_errors(diagnostics):
        raise ProblemsFound()


@click.command("import", cls=ImportDispatch, epilog="""\b
Examples:
  capc import capabilities-export.json             # into capabilities/{api,internal,mcp}/
  capc import rows.json -o capabilities --force    # replace codes that already exist
  capc import openapi petstore.yaml --all          # OpenAPI: see capc import openapi --help""")
@click.argument("rows_file", metavar="ROWS.json")
@click.option("-o", "--output", "output_dir", default=None, metavar="DIR",
              help="Folder the capability files are written into (default: the first "
                   "[tool.capc] roots entry, else capabilities).")
@click.option("--force", is_flag=True,
              help="Replace the files of codes (and files) that already exist.")
@click.option("--group", "group", metavar="ID", default=None,
              help="Import only the rows of this group_id (multi-tenant tables).")
@click.option("--by-group", is_flag=True,
              help="Write one tree per group_id, DIR/ID/, each compiled on its own.")
@click.option("--skip-invalid", is_flag=True,
              help="Write the valid rows and report the others (exit 1 when any was skipped).")
@format_option()
@private_option
@network_option
def import_command(rows_file: str, output_dir: str | None, force: bool, output_format: str,
                   allow_private_networks: bool | None, group: str | None, by_group: bool,
                   skip_invalid: bool, allowed_networks: tuple[str, ...]) -> None:
    """Turn a JSON export of the reference's capabilities table into capc/v1 YAML files.

    Files go into DIR/api, DIR/internal and DIR/mcp. Soft-deleted rows are left out and
    listed; literal credentials become ${NAME} settings, listed to create. A code the tree
    ([tool.capc] roots and DIR) already defines is refused; --force replaces its file. The
    tree as it would be after the import is compiled first, with the options `capc
    compile` uses ([tool.capc] strict, plugins, registrations, allowed_networks): nothing
    is written when it has errors.
    """
    from compiler.authoring.import_command import ImportRequest, run_import
    from compiler.authoring.tree import ensure_editor_schemas

    tree = CompileRequest(allow_private_networks=allow_private_networks,
                          allowed_networks=allowed_networks)
    options = compile_options_for(tree, output_format)
    roots = read_project_settings().roots
    outcome = run_import(ImportRequest(rows_file, output_dir or _first_tree(roots), force,
                                       group, by_group, skip_invalid), options, tree)
    for line in outcome.out:
        click.echo(line)
    if outcome.wrote:
        _echo_schemas(ensure_editor_schemas())
    for line in outcome.err:
        click.echo(escape_control(line), err=True)
    report(outcome.diagnostics, output_format)
    sys.exit(outcome.exit_code)


@click.command("new", epilog="""\b
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
    from compiler.plugins import load_catalogue, read_plugin_settings

    path = Path(output) if output else default_path(kind, name)
    refuse_existing_code(name, (*read_project_settings().roots, path.parent.as_posix()))
    catalogue = (load_catalogue(read_plugin_settings(True))
                 if kind == "internal" else None)
    written = scaffold(kind, name, path, catalogue)
    write_scaffold(written)
    click.echo(written.path.as_posix())
    _echo_schemas(ensure_editor_schemas())


def _first_tree(roots: tuple[str, ...]) -> str:
    """Where imported files go by default: the project's first root, so the next compile
    sees them (a root that is one file: its folder)."""
    tree = Path(roots[0]) if roots else Path(DEFAULT_ROOTS[0])
    return (tree.parent if tree.is_file() else tree).as_posix()


def _echo_schemas(written: list[Path]) -> None:
    for path in written:
        click.echo(f"capc: wrote {path.as_posix()} (the schema editors validate against)",
                   err=True)
