"""``[tool.capc]`` of the working directory's pyproject.toml: the compile options a project
keeps in one place, so ``make compile``, ``capc compile --check`` in CI and a developer's
``capc validate`` all compile the same way.

Keys (all optional): ``roots`` (list of folders/files, default ``["capabilities"]``),
``output`` (default ``"build/manifest.json"``), ``vars`` (list of variable files),
``strict``, ``allow_private_networks`` and ``plugins`` (booleans), ``plugins_timeout``
(seconds, default 30). A flag on the command line wins over the file.

Every default a command uses lives here and nowhere else (the CLI never spells
``build/manifest.json`` or ``capc.lock``): the lock file's name is a built-in default
(``capc.lock`` in the working directory) that ``--lock`` overrides.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.diagnostics import Location
from compiler.errors import InputOutputError, UsageError

PYPROJECT = "pyproject.toml"
DEFAULT_ROOTS = ("capabilities",)
DEFAULT_OUTPUT = "build/manifest.json"
DEFAULT_LOCK = "capc.lock"
DEFAULT_PLUGINS_TIMEOUT = 30.0
KNOWN_KEYS = ("roots", "output", "vars", "strict", "allow_private_networks", "plugins",
              "plugins_timeout")


@dataclass(frozen=True, slots=True)
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


def read_project_settings(cwd: Path | None = None) -> ProjectSettings:
    """The settings of ``cwd``'s pyproject.toml (defaults when it has none)."""
    found = read_capc_table((cwd or Path.cwd()) / PYPROJECT)
    text, table = found if found is not None else ("", {})
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
    )


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
