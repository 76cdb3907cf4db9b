"""What the commands share once their flags are parsed: one compile request, the lock,
and printing diagnostics."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.build import build
from compiler.compile_result import CompileOptions, CompileResult
from compiler.diagnostics import Diagnostic
from compiler.errors import ExitCode, ProblemsFound
from compiler.project import ProjectSettings, read_project_settings
from compiler.report import REPORTERS


def report(diagnostics: tuple[Diagnostic, ...], output_format: str) -> None:
    """Print diagnostics with the chosen reporter (text on stderr, machine formats on stdout)."""
    stream = sys.stderr if output_format == "text" else sys.stdout
    REPORTERS[output_format]().report(diagnostics, stream)


def failure_exit(diagnostics: tuple[Diagnostic, ...]) -> int:
    """2 when a source could not be read (an I/O error, as documented), else 1."""
    unreadable = any(d.code == "io" and d.is_error for d in diagnostics)
    return ExitCode.USAGE if unreadable else ExitCode.PROBLEMS


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
    allowed_networks: tuple[str, ...] = ()


def run_compile(request: CompileRequest, output_format: str = "text") -> CompileResult:
    """Run the compile ``request`` asks for (a bad lock file reports and exits 1).

    Source paths (in diagnostics and the manifest) are relative to the working directory
    when SRC is given there, else to the project root (as pytest's are to its rootdir):
    the project's manifest is the same bytes from any of its subdirectories."""
    project = read_project_settings()
    options = compile_options_for(request, output_format)
    base = None if request.sources else project.root
    return build(request.sources or project.roots, request.variables or project.variables,
                 options, base, use_cache=request.use_cache,
                 cache_dir=Path(request.cache_dir) if request.cache_dir else None)


def compile_options_for(request: CompileRequest, output_format: str = "text") -> CompileOptions:
    """The options ``request`` and [tool.capc] ask a compile for: every command that
    compiles (import's check included) gets them from here."""
    from compiler.plugins import load_catalogue, read_plugin_settings

    project = read_project_settings()
    catalogue = load_catalogue(read_plugin_settings(request.use_plugins))
    pins, lock_path = (read_lock_option(request.lock_file, output_format) if request.use_lock
                       else (None, ""))
    options = CompileOptions(
        strict=project.strict if request.strict is None else request.strict,
        allow_private_networks=(project.allow_private_networks
                                if request.allow_private_networks is None
                                else request.allow_private_networks),
        plugins_snapshot=catalogue, pins=pins, lock_path=lock_path,
        allowed_networks=allowed_networks(project, request.allowed_networks),
        context_attributes=project.context_attributes,
        require_tool_tests=project.require_tool_tests)
    return options


def allowed_networks(project: ProjectSettings, flags: tuple[str, ...]) -> tuple[str, ...]:
    """[tool.capc] allowed_networks and the --allow-network ranges, each once."""
    from compiler.project import checked_networks

    return tuple(dict.fromkeys((*project.allowed_networks,
                                *checked_networks(flags, "--allow-network"))))


def read_lock_option(lock_file: str | None, output_format: str) -> tuple[Any, str]:
    """The lock's servers (None: no lock) and its path; a bad lock reports and exits 1.

    Without ``--lock``, the project's lock is read when it exists.
    """
    path = lock_file or read_project_settings().lock
    if lock_file is None and not Path(path).is_file():
        return None, path
    from compiler.pins.lockfile import read_lock

    servers, problems = read_lock(path)
    if servers is None:
        report(tuple(problems), output_format)
        raise ProblemsFound()
    return servers, path
