"""Small documents and one in-process import call for the OpenAPI importer's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from compiler.authoring.openapi.import_openapi import OpenApiRequest, Outcome, run_import
from compiler.compile_result import CompileOptions
from compiler.tree_compile import CompileRequest

DATA = Path(__file__).parent / "data"
PETSTORE = DATA / "petstore.yaml"


def document(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal valid OpenAPI 3.0 document around ``paths``."""
    base: dict[str, Any] = {"openapi": "3.0.3", "info": {"title": "Test API", "version": "1"},
                            "servers": [{"url": "https://api.example.com"}], "paths": paths}
    base.update(extra)
    return base


def get(operation_id: str, **extra: Any) -> dict[str, Any]:
    """A GET operation with one response."""
    return {"operationId": operation_id, "responses": {"200": {"description": "ok"}}, **extra}


def write(folder: Path, data: dict[str, Any] | str, name: str = "api.yaml") -> Path:
    """Write a document (YAML for .yaml names, JSON otherwise; text as it is)."""
    target = folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        target.write_text(data, encoding="utf-8")
    elif name.endswith(".json"):
        target.write_text(json.dumps(data), encoding="utf-8")
    else:
        target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target


def imported(spec: Path, out: Path, *selectors: str, **options: Any) -> Outcome:
    """Run the import in-process (``--all`` when no selector is given), into a tree of
    ``out`` alone compiled with capc's default options (not this repository's)."""
    import dataclasses

    fields = {field.name for field in dataclasses.fields(OpenApiRequest)}
    compile_options = {key: value for key, value in options.items() if key not in fields}
    flags = {key: value for key, value in options.items() if key in fields}
    return run_import(OpenApiRequest(spec=str(spec), output_dir=str(out),
                                     selectors=selectors, take_all=not selectors,
                                     **{**hermetic(out, **compile_options), **flags}))


def hermetic(*roots: Path | str, **options: Any) -> dict[str, Any]:
    """The ``tree`` and ``options`` of an in-process import that compiles ``roots`` with
    capc's defaults (``options`` as CompileOptions fields), whatever the working directory."""
    return {"tree": CompileRequest(sources=tuple(map(str, roots)), use_cache=False),
            "options": CompileOptions(**options)}


def generated(out: Path, code: str) -> dict[str, Any]:
    """The data of one generated file."""
    loaded: dict[str, Any] = yaml.safe_load((out / f"{code}.yaml").read_text(encoding="utf-8"))
    return loaded


def messages(outcome: Outcome) -> str:
    """Every diagnostic as ``path:line:col code message`` lines."""
    return "\n".join(f"{d.path}:{d.line}:{d.col} {d.code} {d.message}"
                     for d in outcome.diagnostics)


def mapped(spec: Path, *selectors: str) -> dict[str, Any]:
    """Generate without writing or compiling: code → {"data", "notes", "settings"}.

    For mapping tests whose output needs SPEC §10 nesting to compile.
    """
    from compiler.authoring.openapi.generate import ImportSettings, generate
    from compiler.authoring.openapi.import_openapi import read_openapi
    from compiler.authoring.openapi.operations import list_operations, select_operations

    root, _ = read_openapi(spec.resolve(), str(spec))
    operations = list_operations(root)
    chosen = select_operations(operations, selectors, root) if selectors else operations
    result = generate(root, chosen, ImportSettings())
    found: dict[str, Any] = {tool.operation.code: {"data": tool.data, "notes": tool.notes,
                                                   "settings": tool.settings}
                             for tool in result.tools}
    found["__skipped__"] = {s.operation.code: s.reason for s in result.skipped}
    return found
