"""The plugin discovery child: ``python -m compiler.plugin_discovery`` (JSON lines).

:func:`compiler.plugins.discover_catalogue` starts it, so the third-party code a plugin
runs on import never runs in the compiler's process. It loads and registers each entry
point as the runtime's ``discover_plugins`` does (sorted by name, staged, ``call_register``
with no context), then each project registration, and reports each as it goes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection
from typing import Any

from compiler.plugins import ENTRY_POINT_GROUP, UNKNOWN_DISTRIBUTION, Registrations

NO_REGISTRATIONS = Registrations()  # frozen: a safe shared default


def discover_in_process(emit: Callable[[dict[str, Any]], None],
                        group: str = ENTRY_POINT_GROUP, skip: Collection[str] = (),
                        registrations: Registrations = NO_REGISTRATIONS,
                        entry_points: bool = True) -> None:
    """Load and register each entry point of ``group`` here, then each registration,
    reporting through ``emit``.

    Records: ``start`` before an entry point is touched, then ``loaded`` (its catalogue)
    or ``failed``; ``end`` when all are done. A plugin's exception is a ``failed`` record.
    """
    from importlib.metadata import entry_points as installed_entry_points

    # Here, in the discovery child: a compile without registrations never needs them.
    from compiler.registrations import REGISTRATIONS_DISTRIBUTION, register_from
    from compiler.runtime.tools.registry import ToolRegistry, call_register

    points = installed_entry_points(group=group) if entry_points else ()
    for point in sorted(points, key=lambda p: p.name):
        identity = f"{point.name}={point.value}"
        if identity in skip:
            continue
        distribution, version = _distribution_of(point)
        failure = {"entry_point": point.name, "target": point.value,
                   "distribution": distribution, "version": version}
        emit({"event": "start", "identity": identity, "failure": failure})
        staged = ToolRegistry()
        try:
            call_register(point.load(), staged.register_tools, None)
        except BaseException as error:  # a plugin calling sys.exit() is a failure too
            if isinstance(error, KeyboardInterrupt):
                raise
            emit({"event": "failed", "identity": identity, "failure": {
                **failure, "error": f"{type(error).__name__}: {error}"[:500]}})
            continue
        described = _describe(staged, point.name, point.value, version)
        emit({"event": "loaded", "identity": identity, "catalogue": {
            "distributions": {distribution: described}, "failures": []}})
    for spec in registrations.specs:
        identity = f"registration={spec}"
        if identity in skip:
            continue
        failure = {"entry_point": spec, "target": spec,
                   "distribution": REGISTRATIONS_DISTRIBUTION, "version": ""}
        emit({"event": "start", "identity": identity, "failure": failure})
        staged = ToolRegistry()
        try:
            register_from(spec, staged, registrations.root)
        except BaseException as error:  # as for plugins: sys.exit() is a failure too
            if isinstance(error, KeyboardInterrupt):
                raise
            emit({"event": "failed", "identity": identity, "failure": {
                **failure, "error": f"{type(error).__name__}: {error}"[:500]}})
            continue
        emit({"event": "loaded", "identity": identity, "catalogue": {
            "distributions": {REGISTRATIONS_DISTRIBUTION: _describe(staged, spec, spec, "")},
            "failures": []}})
    emit({"event": "end"})


def _distribution_of(point: Any) -> tuple[str, str]:
    dist = getattr(point, "dist", None)
    if dist is None:
        return UNKNOWN_DISTRIBUTION, ""
    return str(dist.metadata["Name"] or dist.name), str(dist.version)


def _describe(registry: Any, entry_point: str, target: str, version: str) -> dict[str, Any]:
    from compiler.runtime.tools.plugin_overrides import describe_tool

    codes: dict[str, Any] = {}
    tools: dict[str, Any] = {}
    for code in registry.codes():
        registered = registry.get(code)
        codes[code] = {"name": registered.name, "description": registered.description,
                       "entry_points": [entry_point],
                       "tools": [tool.name for tool in registered.tools]}
        for tool in registered.tools:
            if tool.name not in tools:
                # The runtime's own rendering, so boot-time drift checks compare like with like.
                descriptor = describe_tool(tool)
                tools[tool.name] = {"name": tool.name, "description": descriptor.description,
                                    "input_schema": descriptor.input_schema, "codes": []}
            tools[tool.name]["codes"].append(code)
    return {"version": version, "entry_points": {entry_point: target}, "codes": codes,
            "tools": tools}


def main(arguments: list[str]) -> int:
    """``python -m compiler.plugin_discovery [--group G] [--skip NAME=TARGET ...]
    [--registration SPEC ... --root DIR] [--no-entry-points] [--report-reads]``: JSON
    lines."""
    group, skip, specs, root, entry_points = ENTRY_POINT_GROUP, [], [], ".", True
    recorder = None
    while arguments:
        flag = arguments.pop(0)
        if flag == "--no-entry-points":
            entry_points = False
        elif flag == "--report-reads":
            from compiler.cache.read_recorder import ReadRecorder

            recorder = ReadRecorder.installed()
        elif flag in ("--group", "--skip", "--registration", "--root") and arguments:
            value = arguments.pop(0)
            if flag == "--group":
                group = value
            elif flag == "--skip":
                skip.append(value)
            elif flag == "--registration":
                specs.append(value)
            else:
                root = value
        else:
            print("usage: python -m compiler.plugin_discovery [--group G] [--skip NAME=TARGET ...]",
                  file=sys.stderr)
            return 2
    # Plugins may print: keep the real stdout for the records and send fd 1 to stderr.
    output = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(record: dict[str, Any]) -> None:
        if recorder is not None and record.get("event") == "end":
            output.write(json.dumps(recorder.record(sys.path, sys.modules)) + "\n")
        output.write(json.dumps(record) + "\n")
        output.flush()  # what was written survives a plugin that kills the interpreter

    discover_in_process(emit, group, skip, Registrations(tuple(specs), root), entry_points)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
