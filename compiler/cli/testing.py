"""``capc test`` and ``capc record``: recorded calls of api tools, replayed in CI (SPEC §17)."""

from __future__ import annotations

import sys

import click

from compiler.cli.options import compile_options
from compiler.cli.running import CompileRequest, failure_exit, report
from compiler.errors import ExitCode, UsageError

__all__ = ["record_command", "test_command"]


@click.command("test", epilog="""\b
Exit codes: 0 every case passed, 1 a case failed (or the tree has errors),
2 usage or I/O error.
\b
Examples:
  capc test                           # [tool.capc] roots, every ToolTest case
  capc test --format github           # pull-request annotations
  capc test --refresh                 # call the live API again; report what changed
  capc test --refresh --write         # ... and rewrite the cases""")
@click.argument("sources", nargs=-1)
@click.option("--profile", default=None, metavar="NAME",
              help="Replay only the cases of the capabilities in this profile.")
@click.option("--refresh", is_flag=True,
              help="Call the live API again for every case and report what changed.")
@click.option("--write", is_flag=True,
              help="With --refresh: rewrite the case files with the new recordings.")
@click.option("--settings-from-env", is_flag=True,
              help="With --refresh: resolve ${NAME} settings from the environment.")
@compile_options
def test_command(sources: tuple[str, ...], profile: str | None, refresh: bool, write: bool,
                 settings_from_env: bool, variables: tuple[str, ...], strict: bool | None,
                 output_format: str, allow_private_networks: bool | None,
                 use_plugins: bool | None, no_cache: bool, cache_dir: str | None,
                 lock_file: str | None, allowed_networks: tuple[str, ...]) -> None:
    """Replay every ToolTest case of SOURCES offline through the real tool code."""
    from compiler.tooltests.session import (
        cases_in_profile,
        compile_tree,
        replay_all,
        tool_test_cases,
    )

    if write and not refresh:
        raise UsageError("--write rewrites cases with new recordings: use it with --refresh")
    request = CompileRequest(sources, variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file,
                             allowed_networks=allowed_networks)
    result = compile_tree(request, output_format)
    if result.manifest is None:
        report(result.diagnostics, output_format)
        sys.exit(failure_exit(result.diagnostics))
    cases, problems = tool_test_cases(request)
    try:
        cases = cases_in_profile(cases, result.manifest, profile)
    except KeyError:
        raise UsageError(f"no profile {profile!r} in the compiled tree") from None
    if refresh:
        from compiler.tooltests.refresh import refresh_cases

        found = refresh_cases(cases, result.manifest, request, settings_from_env, write)
        report((*result.diagnostics, *problems, *found), output_format)
        sys.exit(ExitCode.PROBLEMS if any(d.is_error for d in (*problems, *found))
                 else ExitCode.OK)
    from compiler.tooltests.recording import egress_policy

    run = replay_all(cases, result.manifest, egress_policy(request))
    diagnostics = tuple(sorted((*result.diagnostics, *problems, *run.diagnostics)))
    if output_format == "text":
        click.echo(run.summary(), err=True)
    report(diagnostics, output_format)
    if any(d.is_error for d in diagnostics):
        sys.exit(ExitCode.PROBLEMS)


@click.command("record", epilog="""\b
Examples:
  capc record get_weather --args '{"city": "Paris"}' --settings-from-env
  capc record get_weather --args '{"city": "Oslo"}' --name oslo""")
@click.argument("code")
@click.option("--args", "arguments", required=True, metavar="JSON",
              help="The tool's arguments, a JSON object.")
@click.option("--name", default=None, help="The case's name (default: derived from the args).")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="The ToolTest file to add the case to (default: beside the capability, "
                   "CODE.test.yaml).")
@click.option("--settings-from-env", is_flag=True,
              help="Resolve ${NAME} settings from environment variables of the same name.")
@click.option("--document", "documents", multiple=True, metavar="ID=PATH",
              help="A chat document the call uploads (repeatable).")
@compile_options
def record_command(code: str, arguments: str, name: str | None, output: str | None,
                   settings_from_env: bool, documents: tuple[str, ...],
                   variables: tuple[str, ...], strict: bool | None, output_format: str,
                   allow_private_networks: bool | None, use_plugins: bool | None,
                   no_cache: bool, cache_dir: str | None, lock_file: str | None,
                   allowed_networks: tuple[str, ...]) -> None:
    """Call api tool CODE once for real, through the egress guard, and write the case."""
    from compiler.tooltests.recording import record_case_command

    request = CompileRequest((), variables, strict, allow_private_networks, use_plugins,
                             not no_cache, cache_dir, lock_file,
                             allowed_networks=allowed_networks)
    record_case_command(request, code, arguments, name, output, settings_from_env,
                        documents, output_format)
