"""The one way to compile a tree: every command that compiles or checks one goes through here.

:func:`compile_options_for` builds the :class:`CompileOptions` of a compile from the
project settings (``[tool.capc]``, :mod:`compiler.project`) and the command line's
overrides (a :class:`CompileRequest`); :func:`compile_tree` compiles the tree with them:
the compile cache, templates with their variables, plugins and registrations, the lock,
allowed networks and strictness. A command that would write sources (an import) passes a
:class:`TreeOverlay` of the files it would write and remove, and so checks exactly the
tree it would leave, with the verdict the next ``capc compile`` gives.

``capc compile``, ``validate``, ``lock``, ``migrate``, ``diff --git``, ``import ROWS.json``
and ``import openapi`` (and ``--check``) use both; docs/architecture.md shows how a new
command does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.build import build
from compiler.compile_result import CompileOptions, CompileResult, TreeOverlay
from compiler.errors import ProblemsFound
from compiler.project import ProjectSettings, checked_networks, read_project_settings
from compiler.runtime.records import record

if TYPE_CHECKING:
    from compiler.cache.deferred_entries import DeferredEntries
    from compiler.plugins import PluginSettings

__all__ = ["CompileRequest", "TreeOverlay", "compile_options_for", "compile_tree",
           "covering"]


@record(frozen=True, slots=True)
class CompileRequest:
    """What a command's flags ask a compile for; None (or empty) means "as [tool.capc] says".

    Built once per command from its flags, so every compile of that command (the stale
    check's second compile included) asks for the same thing. ``sources``: the roots to
    compile (default: [tool.capc] roots); ``variables``: template variable files (default:
    [tool.capc] vars); ``allowed_networks`` are added to [tool.capc] allowed_networks.
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


def compile_options_for(request: CompileRequest, output_format: str = "text",
                        project: ProjectSettings | None = None) -> CompileOptions:
    """The options ``request`` and [tool.capc] ask a compile for (plugins and registrations
    discovered, the lock read); the one place a command's compile options are made.

    A lock that cannot be read is reported in ``output_format`` and raises ProblemsFound.
    """
    from compiler.plugins import load_catalogue, read_plugin_settings

    project = project or read_project_settings()
    settings = read_plugin_settings(request.use_plugins)
    # The cache modules only when there is a catalogue to keep (a cold compile without
    # plugins imports none of them: tests/cli/test_import_laziness.py).
    catalogue = load_catalogue(settings, _catalogue_discovery(request) if settings.enabled
                               else None)
    pins, lock_path = (_read_lock(request.lock_file, project, output_format)
                       if request.use_lock else (None, ""))
    return CompileOptions(
        strict=project.strict if request.strict is None else request.strict,
        allow_private_networks=(project.allow_private_networks
                                if request.allow_private_networks is None
                                else request.allow_private_networks),
        plugins_snapshot=catalogue, pins=pins, lock_path=lock_path,
        allowed_networks=allowed_networks(project, request.allowed_networks),
        context_attributes=project.context_attributes,
        require_tool_tests=project.require_tool_tests)


def _catalogue_discovery(
        request: CompileRequest) -> Callable[[PluginSettings], dict[str, Any]] | None:
    """Discovery that keeps the plugin catalogue between compiles in the compile cache's
    folder (compiler/cache/plugin_catalogue.py), or None when the cache is off."""
    from compiler.cache.plugin_catalogue import discover_reusing
    from compiler.cache.store import cache_disabled, default_cache_dir

    if not request.use_cache or cache_disabled():
        return None
    folder = Path(request.cache_dir) if request.cache_dir else default_cache_dir()
    return lambda settings: discover_reusing(settings, folder)


def compile_tree(request: CompileRequest, overlay: TreeOverlay | None = None, *,
                 options: CompileOptions | None = None, output_format: str = "text",
                 base: Path | None = None, deferred: DeferredEntries | None = None,
                 kept: list[object] | None = None) -> CompileResult:
    """Compile the tree ``request`` names (with ``overlay``'s files written and removed, in
    memory only), with ``options`` (default: :func:`compile_options_for` ``request``).

    Source paths (in diagnostics and the manifest) are relative to ``base`` when given,
    else to the working directory when ``request.sources`` are given, else to the project
    root (as pytest's are to its rootdir): the project's manifest is the same bytes from
    any of its subdirectories. ``deferred``: the compile cache's writes are held there
    (compiler/cache/deferred_entries.py: an import stores them once it writes the tree).
    ``kept``: see :func:`compiler.build.build` (a one-shot command's compile).
    """
    project = read_project_settings()
    if options is None:
        options = compile_options_for(request, output_format, project)
    base = base or (None if request.sources else project.root)
    return build(request.sources or project.roots, request.variables or project.variables,
                 options, base, use_cache=request.use_cache,
                 cache_dir=Path(request.cache_dir) if request.cache_dir else None,
                 overlay=overlay, deferred=deferred, kept=kept)


def covering(request: CompileRequest, folder: str) -> CompileRequest:
    """``request`` with ``folder`` (where a command writes) among its sources when no source
    holds it, and without the sources that do not exist (but the one that will hold what
    is written): the tree an import checks is the project's tree and what it writes,
    wherever that goes. ``request`` itself when that changes nothing."""
    roots = request.sources or read_project_settings().roots
    wanted = os.path.realpath(folder)

    def holds(root: str) -> bool:
        real = os.path.realpath(root)
        return wanted == real or wanted.startswith(real.rstrip(os.sep) + os.sep)

    holding = [root for root in roots if holds(root)]
    sources = tuple(root for root in roots if root in holding or os.path.exists(root))
    sources += () if holding else (folder,)
    return request if sources == tuple(roots) else replace(request, sources=sources)


def allowed_networks(project: ProjectSettings, flags: tuple[str, ...]) -> tuple[str, ...]:
    """[tool.capc] allowed_networks and the --allow-network ranges, each once."""
    return tuple(dict.fromkeys((*project.allowed_networks,
                                *checked_networks(flags, "--allow-network"))))


def _read_lock(lock_file: str | None, project: ProjectSettings, output_format: str
               ) -> tuple[Any, str]:
    """The lock's servers (None: no lock) and its path; a bad lock reports and exits 1.

    Without ``--lock``, the project's lock is read when it exists.
    """
    path = lock_file or project.lock
    if lock_file is None and not Path(path).is_file():
        return None, path
    from compiler.pins.lockfile import read_lock

    servers, problems = read_lock(path)
    if servers is None:
        import sys

        from compiler.report import REPORTERS

        stream = sys.stderr if output_format == "text" else sys.stdout
        REPORTERS[output_format]().report(tuple(problems), stream)
        raise ProblemsFound()
    return servers, path
