"""``[tool.capc]`` of the project's pyproject.toml: the compile options a project keeps in
one place, so ``make compile``, ``capc compile --check`` in CI and a developer's
``capc validate`` all compile the same way.

The project's pyproject.toml is found upward from the working directory, as ruff and pytest
find theirs: the nearest one with a ``[tool.capc]`` table, else the nearest one at all,
else none (capc's defaults, in the working directory). The search stops at the root of a
git repository (a directory holding ``.git``) or of the filesystem. The paths it names
(``roots``, ``output``, ``vars``, the lock) are relative to the directory holding it, the
project root; run from that root they read exactly as written.

Keys (all optional): ``roots`` (list of folders/files, default ``["capabilities"]``),
``output`` (default ``"build/manifest.json"``), ``vars`` (list of variable files),
``strict``, ``allow_private_networks`` and ``plugins`` (booleans), ``plugins_timeout``
(seconds, default 30), ``allowed_networks`` (CIDR ranges allowed exactly,
``--allow-network`` adds to them), ``context_attributes`` (the extra ``RuntimeContext``
attributes the application passes, which ``when:`` may test), ``require_tool_tests``
(every api capability needs a ToolTest case or ``untested: REASON``) and ``registrations``
(the host application's registration modules or ``module:function``; read by
:mod:`compiler.plugins`).
A flag on the command line wins over the file.

Every default a command uses lives here and nowhere else (the CLI never spells
``build/manifest.json`` or ``capc.lock``): the lock file's name is a built-in default
(``capc.lock`` in the working directory) that ``--lock`` overrides.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from compiler.diagnostics import Location
from compiler.errors import InputOutputError, UsageError
from compiler.runtime.records import record

PYPROJECT = "pyproject.toml"
DEFAULT_ROOTS = ("capabilities",)
DEFAULT_OUTPUT = "build/manifest.json"
DEFAULT_LOCK = "capc.lock"
DEFAULT_PLUGINS_TIMEOUT = 30.0
KNOWN_KEYS = ("roots", "output", "vars", "strict", "allow_private_networks", "plugins",
              "plugins_timeout", "allowed_networks", "registrations", "context_attributes",
              "require_tool_tests")


@record(frozen=True, slots=True)
class ProjectSettings:
    """What ``[tool.capc]`` says, with capc's defaults for what it leaves out."""

    roots: tuple[str, ...] = DEFAULT_ROOTS
    output: str = DEFAULT_OUTPUT
    variables: tuple[str, ...] = ()
    strict: bool = False
    allow_private_networks: bool = False
    lock: str = DEFAULT_LOCK
    plugins: bool = False
    plugins_timeout: float = DEFAULT_PLUGINS_TIMEOUT
    # Where ``plugins = true`` was written, so a plugin-related warning can point at it.
    plugins_origin: Location | None = None
    allowed_networks: tuple[str, ...] = ()
    registrations: tuple[str, ...] = ()
    registrations_origin: Location | None = None
    context_attributes: tuple[str, ...] = ()
    # SPEC §17: every api capability needs a ToolTest case or ``untested: REASON``.
    require_tool_tests: bool = False
    # The directory holding the pyproject.toml read (the working directory when none was).
    root: Path = Path()


def find_project_root(cwd: Path | None = None) -> Path:
    """The directory of the pyproject.toml that configures ``cwd`` (see the module doc)."""
    start = (cwd or Path.cwd()).resolve()
    nearest: Path | None = None
    for directory in (start, *start.parents):
        candidate = directory / PYPROJECT
        if candidate.is_file():
            if _has_capc_table(candidate):
                return directory
            nearest = nearest or directory
        if (directory / ".git").exists():
            break  # a repository's root: a pyproject.toml above it belongs to something else
    return nearest or start


def _has_capc_table(path: Path) -> bool:
    import tomllib

    try:
        tool = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # stop here: reading it reports the problem, located
    return isinstance(tool, dict) and "capc" in tool


def read_project_settings(cwd: Path | None = None) -> ProjectSettings:
    """The settings of the project ``cwd`` is in (defaults when it has no pyproject.toml)."""
    here = (cwd or Path.cwd())
    root = find_project_root(here)
    found = read_capc_table(root / PYPROJECT)
    text, table = found if found is not None else ("", {})
    settings = replace(_settings_of(text, table), root=root)
    if root == here.resolve():
        return settings  # run from the root: every path exactly as written
    return _relative_to(settings, root, here)


def _relative_to(settings: ProjectSettings, root: Path, cwd: Path) -> ProjectSettings:
    """``settings`` with its paths (written relative to ``root``) relative to ``cwd``."""

    def moved(path: str) -> str:
        return os.path.relpath(root / path, cwd.resolve()) if not Path(path).is_absolute() \
            else path

    origin = os.path.relpath(root / PYPROJECT, cwd.resolve())
    return replace(
        settings, root=root, roots=tuple(map(moved, settings.roots)),
        output=moved(settings.output), variables=tuple(map(moved, settings.variables)),
        lock=moved(settings.lock),
        plugins_origin=(replace(settings.plugins_origin, path=origin)
                        if settings.plugins_origin else None),
        registrations_origin=(replace(settings.registrations_origin, path=origin)
                              if settings.registrations_origin else None))


def _settings_of(text: str, table: dict[str, Any]) -> ProjectSettings:
    """The settings one ``[tool.capc]`` table (and the text it was read from) says."""
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise UsageError(f"{PYPROJECT}: [tool.capc] has unknown key(s) {', '.join(unknown)}; "
                         f"known: {', '.join(KNOWN_KEYS)}")
    return ProjectSettings(
        roots=_strings(table, "roots", DEFAULT_ROOTS),
        output=_string(table, "output", DEFAULT_OUTPUT),
        variables=_strings(table, "vars", ()),
        strict=_boolean(table, "strict"),
        allow_private_networks=_boolean(table, "allow_private_networks"),
        plugins=_boolean(table, "plugins"),
        plugins_timeout=_positive_number(table, "plugins_timeout", DEFAULT_PLUGINS_TIMEOUT),
        plugins_origin=(Location(PYPROJECT, _line_of(text, "plugins"))
                        if table.get("plugins") is True else None),
        allowed_networks=checked_networks(_strings(table, "allowed_networks", ()),
                                          f"{PYPROJECT}: [tool.capc] allowed_networks"),
        registrations=_registrations(table),
        registrations_origin=(Location(PYPROJECT, _line_of(text, "registrations"))
                              if table.get("registrations") else None),
        context_attributes=_context_attributes(table),
        require_tool_tests=_boolean(table, "require_tool_tests"),
    )


def _context_attributes(table: dict[str, Any]) -> tuple[str, ...]:
    """``context_attributes``: names a condition may test, each a valid attribute name."""
    from compiler.runtime.conditions import ATTRIBUTE_NAME

    names = _strings(table, "context_attributes", ())
    for name in names:
        if not ATTRIBUTE_NAME.fullmatch(name):
            raise UsageError(f"{PYPROJECT}: [tool.capc] context_attributes: {name!r} is not an "
                             "attribute name (lowercase letters, digits, _)")
    return names


def _registrations(table: dict[str, Any]) -> tuple[str, ...]:
    """``registrations``: each a module or ``module:function`` (checked, not imported)."""
    specs = table.get("registrations", [])
    if not isinstance(specs, list):
        raise UsageError(f"{PYPROJECT}: [tool.capc] registrations must be a list of strings")
    if not specs:
        return ()  # most projects: the checker's module is not even imported
    from compiler.registrations import registration_problem

    for spec in specs:
        problem = registration_problem(spec)
        if problem is not None:
            raise UsageError(f"{PYPROJECT}: [tool.capc] registrations: {problem}")
    return tuple(specs)


def checked_networks(texts: tuple[str, ...], origin: str) -> tuple[str, ...]:
    """``texts`` when each is a range capc may allow, else a usage error naming ``origin``."""
    from compiler.runtime.egress.addresses import NetworkRangeError, parse_allowed_networks

    try:
        parse_allowed_networks(texts)
    except NetworkRangeError as error:
        raise UsageError(f"{origin}: {error}") from None
    return texts


def read_capc_table(path: Path) -> tuple[str, dict[str, Any]] | None:
    """The text of the pyproject.toml at ``path`` and its ``[tool.capc]`` table (empty when
    absent), or None when there is no such file: every reader of the table goes through here."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise InputOutputError(f"{PYPROJECT}: cannot read: {error}") from None
    import tomllib  # here: most trees compiled have no pyproject.toml next to them

    try:
        table = tomllib.loads(text).get("tool", {}).get("capc", {})
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{PYPROJECT}: invalid TOML: {error}") from None
    if not isinstance(table, dict):
        raise UsageError(f"{PYPROJECT}: [tool.capc] must be a table")
    return text, table


def _boolean(table: dict[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise UsageError(f"{PYPROJECT}: [tool.capc] {key} must be true or false")
    return value


def _string(table: dict[str, Any], key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise UsageError(f"{PYPROJECT}: [tool.capc] {key} must be a non-empty string")
    return value


def _strings(table: dict[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = table.get(key)
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"{PYPROJECT}: [tool.capc] {key} must be a list of strings")
    return tuple(value)


def _positive_number(table: dict[str, Any], key: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UsageError(f"{PYPROJECT}: [tool.capc] {key} must be a positive number")
    return float(value)


def _line_of(text: str, key: str) -> int:
    """The line of ``key = ...`` inside ``[tool.capc]`` (1 when it cannot be found)."""
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.replace(" ", "") == "[tool.capc]"
        elif inside and stripped.partition("=")[0].strip() == key:
            return number
    return 1
