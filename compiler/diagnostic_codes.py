"""Every diagnostic code capc can report, collected from the modules that declare them.

A module that reports diagnostics declares its codes once, as module-level constants, and
lists them in a module-level ``CODES`` tuple (yamllint's rule modules do the same with
their ``ID``)::

    DUPLICATE_CODE = Code("duplicate-code", "two capabilities share a code")
    CODES = (DUPLICATE_CODE,)

    Diagnostic.error(document.location(path), DUPLICATE_CODE, f"code {code!r} is taken")

To add a code: declare it that way in the module that reports it (import it from there
where another module reports it too), and if the module is new to this list, add its name
to ``MODULES`` below. tests/cli/test_every_code_has_a_bad_case.py then asks for a bad case
that produces it, and fails on an id declared twice or a code written as a literal string.

The registry imports every listed module, so only listings and tests call it, never a
compile.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType

from compiler.diagnostics import Code

MODULES = (
    "compiler.authoring.import_command",
    "compiler.authoring.import_tree",
    "compiler.authoring.importer",
    "compiler.authoring.migrate",
    "compiler.authoring.openapi.document",
    "compiler.authoring.openapi.import_openapi",
    "compiler.authoring.openapi.operations",
    "compiler.authoring.openapi.refs",
    "compiler.authoring.openapi.schemas",
    "compiler.authoring.openapi.security",
    "compiler.authoring.openapi.servers",
    "compiler.authoring.openapi.validate",
    "compiler.checks.api",
    "compiler.checks.final_names",
    "compiler.checks.internal",
    "compiler.checks.mcp",
    "compiler.checks.names",
    "compiler.checks.parameter_rules",
    "compiler.checks.parameter_values",
    "compiler.checks.pin_rules",
    "compiler.checks.scaffold_placeholders",
    "compiler.checks.url_rules",
    "compiler.checks.when_conditions",
    "compiler.cli.writing",
    "compiler.output_shaping",
    "compiler.overrides",
    "compiler.pins.lock_command",
    "compiler.pins.lockfile",
    "compiler.pins.pinned_overrides",
    "compiler.profiles.budget_check",
    "compiler.profiles.check",
    "compiler.profiles.namespaces",
    "compiler.schema.kinds",
    "compiler.schema.validation",
    "compiler.source.documents",
    "compiler.source.safe_read",
    "compiler.source.templates",
    "compiler.source.yaml_converter",
    "compiler.source.yaml_loader",
    "compiler.source.yaml_resolver",
    "compiler.tooltests.checks",
    "compiler.tooltests.recording",
    "compiler.tooltests.refresh",
    "compiler.tooltests.replaying",
    "compiler.tooltests.session",
)
"""The modules that declare codes, by import name."""


class DuplicateCode(Exception):
    """Two declarations share one id."""


def declared_codes() -> tuple[tuple[str, Code], ...]:
    """Every (module, code) declaration, in ``MODULES`` order."""
    declared: list[tuple[str, Code]] = []
    for name in MODULES:
        codes: tuple[Code, ...] = importlib.import_module(name).CODES
        declared.extend((name, code) for code in codes)
    return tuple(declared)


def registry() -> Mapping[str, Code]:
    """Every declared code by id; raises :class:`DuplicateCode` when an id is declared twice."""
    found: dict[str, tuple[str, Code]] = {}
    for module, code in declared_codes():
        if code.id in found:
            raise DuplicateCode(f"{code.id!r} is declared by {found[code.id][0]} and {module}")
        found[code.id] = (module, code)
    return MappingProxyType({code_id: code for code_id, (_, code) in sorted(found.items())})
