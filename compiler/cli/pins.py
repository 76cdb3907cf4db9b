"""``capc lock``: pin the tools of every MCP server of a tree (SPEC §7)."""

from __future__ import annotations

import sys

import click

from compiler.cli.options import format_option, private_option, variables_option
from compiler.cli.running import CompileRequest, report, run_compile
from compiler.errors import ExitCode
from compiler.project import read_project_settings


@click.command("lock", epilog="""\b
Examples:
  capc lock                              # pin every MCP server of capabilities/ in capc.lock
  capc lock --settings settings.yaml     # fill ${NAME} in server URLs and headers
  capc lock --check                      # on a schedule: exit 1 when a server drifted""")
@click.argument("sources", nargs=-1)
@click.option("--lock", "lock_file", default=None, metavar="FILE",
              help="The lock file to write (or compare with --check; default: capc.lock).")
@click.option("--settings", "settings_file", metavar="FILE",
              help="YAML mapping NAME: value filling ${NAME} in server URLs and headers "
                   "(else $CAPC_SETTING_NAME).")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when a live listing differs from the lock.")
@click.option("--timeout", type=click.FloatRange(0.1, 300.0), default=30.0, show_default=True,
              help="Seconds one server may take to list its tools.")
@variables_option
@private_option
@format_option()
def lock_command(sources: tuple[str, ...], lock_file: str | None, settings_file: str | None,
                 check: bool, timeout: float, variables: tuple[str, ...],
                 allow_private_networks: bool | None, output_format: str) -> None:
    """Pin the tools of every MCP server of SOURCES in a lock file (capc.lock)."""
    from compiler.pins.command import read_settings, run_lock

    settings, problems = read_settings(settings_file)
    if problems:
        report(tuple(problems), output_format)
        sys.exit(ExitCode.USAGE)
    request = CompileRequest(sources, variables, strict=False,
                             allow_private_networks=allow_private_networks, use_plugins=False,
                             use_lock=False)
    result = run_compile(request, output_format)
    if result.manifest is None:
        report(result.diagnostics, output_format)
        sys.exit(ExitCode.PROBLEMS)
    project = read_project_settings()
    if allow_private_networks is None:
        allow_private_networks = project.allow_private_networks
    outcome = run_lock(result.manifest, lock_file or project.lock, settings, check=check,
                       allow_private_networks=allow_private_networks, timeout=timeout)
    if outcome.diagnostics:
        report(outcome.diagnostics, output_format)
    for line in outcome.out:
        click.echo(line)
    for line in outcome.err:
        click.echo(line, err=True)
    sys.exit(outcome.exit_code)
