"""``capc lock``: pin the tools of every MCP server of a tree (SPEC §7)."""

from __future__ import annotations

import sys

import click

from compiler.cli.options import (
    format_option,
    network_option,
    private_option,
    variables_option,
)
from compiler.cli.running import CompileRequest, compile_options_for, compile_tree, report
from compiler.errors import ExitCode
from compiler.project import read_project_settings


@click.command("lock", epilog="""\b
Examples:
  capc lock                              # pin every MCP server of capabilities/ in capc.lock
  capc lock --settings settings.yaml     # fill ${NAME} in server URLs and headers
  capc lock --check                      # on a schedule: exit 1 when a server drifted
  capc lock --server wiki                # re-pin one server, keep the others' pins""")
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
@click.option("--server", "servers", multiple=True, metavar="LABEL",
              help="List only this server and merge it into the lock, keeping the other "
                   "pins (repeatable).")
@private_option
@network_option
@format_option()
def lock_command(sources: tuple[str, ...], lock_file: str | None, settings_file: str | None,
                 check: bool, timeout: float, variables: tuple[str, ...],
                 servers: tuple[str, ...], allow_private_networks: bool | None,
                 allowed_networks: tuple[str, ...], output_format: str) -> None:
    """Pin the tools of the MCP servers of SOURCES in a lock file (capc.lock).

    A server that cannot be listed is reported and keeps its pins; the others are still
    written (exit 2). A capability with `unpinned: REASON` is not listed.
    """
    from compiler.pins.lock_command import LockRequest, read_settings, run_lock
    from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks

    settings, problems = read_settings(settings_file)
    if problems:
        report(tuple(problems), output_format)
        sys.exit(ExitCode.USAGE)
    request = CompileRequest(sources, variables, strict=False,
                             allow_private_networks=allow_private_networks, use_plugins=None,
                             use_lock=False, allowed_networks=allowed_networks)
    options = compile_options_for(request, output_format)
    result = compile_tree(request, options=options)
    if result.manifest is None:
        report(result.diagnostics, output_format)
        sys.exit(ExitCode.PROBLEMS)
    policy = EgressPolicy(options.allow_private_networks,
                          parse_allowed_networks(options.allowed_networks))
    lock_path = lock_file or read_project_settings().lock
    outcome = run_lock(result.manifest, LockRequest(lock_path, check, timeout, servers),
                       settings, policy)
    if outcome.diagnostics:
        report(outcome.diagnostics, output_format)
    for line in outcome.out:
        click.echo(line)
    for line in outcome.err:
        click.echo(line, err=True)
    sys.exit(outcome.exit_code)
