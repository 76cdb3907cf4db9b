"""``[tool.capc] registrations``: tools the host application registers itself.

The reference registered most of its internal tools inside the application
(``tool_registrations.py``, ``@capability``), not through installed plugins. Such a
project lists where that happens, and the compile-time catalogue imports it exactly as
the application does at startup, beside the entry-point plugins:

- ``"myapp.tool_registrations"``: the module is imported (from the project root, as the
  application imports it); every :class:`~compiler.runtime.tools.registry.ToolRegistry`
  it filled at module level, in it or in a module it imported, is catalogued.
- ``"myapp.tools:register"``: the function is called as a plugin's ``register`` is, with
  ``registry_fn`` (and ``None`` as context when it takes a second parameter).

This runs inside the discovery child of :mod:`compiler.plugins`, never in the compiler's
own process: it imports the project's code.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any

# The catalogue's name for what registrations add (they need not be an installed
# distribution); recorded in the manifest like a plugin distribution.
REGISTRATIONS_DISTRIBUTION = "(project registrations)"
_SPEC = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
                   r"(?::[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)?$")


def registration_problem(spec: Any) -> str | None:
    """Why ``spec`` is not ``package.module`` or ``package.module:function`` (None: it is)."""
    if not isinstance(spec, str) or not _SPEC.fullmatch(spec):
        return (f"{spec!r} is not a module (myapp.tool_registrations) or a function "
                "(myapp.tools:register)")
    return None


def register_from(spec: str, registry: Any, project_root: str) -> None:
    """Fill ``registry`` from one registration ``spec``; raises whatever the project's
    code raises (the caller records it as that registration's failure)."""
    from compiler.runtime.tools.registry import ToolRegistry, call_register

    if project_root not in sys.path:
        sys.path.insert(0, project_root)  # as `python -m myapp` in the project root would
    module_name, _, function_path = spec.partition(":")
    before = set(sys.modules)
    module = importlib.import_module(module_name)
    if function_path:
        target: Any = module
        for attribute in function_path.split("."):
            target = getattr(target, attribute)
        call_register(target, registry.register_tools, None)
        return
    found = _filled_registries(module, before, ToolRegistry)
    if not found:
        raise LookupError(f"importing {module_name} filled no compiler.runtime ToolRegistry "
                          "(see docs/plugins.md: register_tools of a module-level registry, "
                          "or name a function as MODULE:FUNCTION)")
    for filled in found:
        registry.merge(filled)


def _filled_registries(module: Any, before: set[str], registry_type: type[Any]) -> list[Any]:
    """Module-level registries with codes in ``module``, the modules its import loaded,
    and the modules of its top-level package (which an earlier registration may have
    loaded already)."""
    package = module.__name__.split(".")[0]
    names: Sequence[str] = sorted(
        name for name in list(sys.modules)
        if name not in before or name == package or name.startswith(package + "."))
    seen: dict[int, Any] = {}
    for name in names:
        loaded = sys.modules.get(name)
        for value in list(vars(loaded).values()) if loaded is not None else ():
            if isinstance(value, registry_type) and value.codes():
                seen.setdefault(id(value), value)
    return list(seen.values())
