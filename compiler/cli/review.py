"""The review commands: ``capc diff``, ``docs``, ``explain`` and ``schema``.

Each reads a manifest through the one reader (``compiler.manifest``), so all of them refuse
the same manifests with the same exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compiler.cli.options import format_option, manifest_option, variables_option
from compiler.errors import ExitCode, ProblemsFound, UsageError
from compiler.manifest import read_manifest_model, write_atomically
from compiler.project import read_project_settings
from compiler.report.escape import escape_control


@click.command("schema", epilog="""\b
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


@click.command("explain", epilog="""\b
Examples:
  capc explain get_weather
  capc explain memory__remember -m build/manifest.json""")
@click.argument("tool")
@manifest_option
def explain_command(tool: str, manifest_path: str | None) -> None:
    """Show TOOL's final descriptor and where each part came from."""
    from compiler.review.explain import explain_tool, unknown_tool_message
    from compiler.review.freshness import staleness_warning

    project = read_project_settings()
    manifest_path = manifest_path or project.output
    manifest = read_manifest_model(manifest_path)
    warning = staleness_warning(manifest_path, (project.root, Path.cwd()))
    if warning is not None:
        click.echo(escape_control(warning), err=True)
    text = explain_tool(manifest, tool)
    if text is None:
        click.echo(escape_control(
            f"capc: {unknown_tool_message(manifest, tool, manifest_path)}"), err=True)
        raise ProblemsFound()
    click.echo(text, nl=False)


@click.command("docs", epilog="""\b
Examples:
  capc docs > CAPABILITIES.md
  capc docs -m build/manifest.json -o docs/capabilities.md""")
@manifest_option
@click.option("-o", "--output", metavar="FILE", help="Write the catalogue here (default: stdout).")
def docs_command(manifest_path: str | None, output: str | None) -> None:
    """Write a Markdown catalogue of the manifest's capabilities and tools."""
    from compiler.review.docs import render_catalogue

    text = render_catalogue(read_manifest_model(manifest_path or read_project_settings().output))
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomically(Path(output), text.encode("utf-8"))


@click.command("diff", epilog="""\b
Examples:
  capc diff old.json new.json
  capc diff --git origin/main.. --format markdown    # the working tree vs main
  capc diff --git v1..v2 --fail-on security""")
@click.argument("manifests", nargs=-1, metavar="OLD NEW")
@format_option(("text", "markdown", "json"), "text, markdown (PR comment) or json.")
@click.option("--exit-code", "exit_code", is_flag=True, help="Exit 1 when anything changed.")
@click.option("--fail-on", type=click.Choice(["security"]),
              help="Exit 1 when a security-relevant change is present.")
@click.option("--git", "git_range", metavar="REV1..REV2",
              help="Compile the sources (the arguments, default: [tool.capc] roots) at two git "
                   "revisions and compare those; REV2 empty means the working tree.")
@variables_option
def diff_command(manifests: tuple[str, ...], output_format: str, exit_code: bool,
                 fail_on: str | None, git_range: str | None,
                 variables: tuple[str, ...]) -> None:
    """Show what changed between manifests OLD and NEW, security-relevant changes first."""
    from compiler.review.diff_report import RENDERERS, diff_files, diff_revisions

    if git_range is not None:
        project = read_project_settings()
        diff = diff_revisions(git_range, manifests or project.roots,
                              variable_files=variables or project.variables)
    elif len(manifests) == 2:
        diff = diff_files(manifests[0], manifests[1])
    else:
        raise click.UsageError("capc diff wants two manifests, OLD and NEW (or --git REV1..REV2)")
    click.echo(RENDERERS[output_format](diff), nl=False)
    # --exit-code: anything changed; --fail-on security: a change that lets an agent reach more.
    failed = (exit_code and diff.has_changes) or (fail_on == "security" and bool(diff.security))
    sys.exit(ExitCode.PROBLEMS if failed else ExitCode.OK)


@click.command("budget", epilog="""\b
Examples:
  capc budget
  capc budget --profile support-bot --format markdown >> $GITHUB_STEP_SUMMARY""")
@manifest_option
@click.option("--profile", default=None, metavar="NAME", help="Only this profile.")
@format_option(("text", "markdown", "json"), "text, markdown (PR summary) or json.")
def budget_command(manifest_path: str | None, profile: str | None, output_format: str) -> None:
    """Per profile and provider: tools and tokens sent up front and deferred (exit 1: over
    budget, or without capc[budget] a token budget its upper bound cannot prove met)."""
    from compiler.profiles.report import RENDERERS, UnknownProfile, budget_report
    from compiler.review.freshness import staleness_warning

    project = read_project_settings()
    manifest_path = manifest_path or project.output
    try:
        report = budget_report(manifest_path, profile)
    except UnknownProfile as error:
        raise UsageError(str(error)) from None
    warning = staleness_warning(manifest_path, (project.root, Path.cwd()))
    if warning is not None:  # as capc explain: the figures are the manifest's, not the tree's
        click.echo(escape_control(warning), err=True)
    click.echo(RENDERERS[output_format](report), nl=False)
    if report.missing is not None and output_format != "text":  # text says it first
        click.echo(f"capc budget: {report.missing}", err=True)
    if report.failed:
        raise ProblemsFound()
