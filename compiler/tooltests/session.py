"""``capc test``: compile the tree as ``capc compile`` does, then replay every case.

:func:`compile_tree` goes through the one compile entry point
(:func:`compiler.tree_compile.compile_tree`) with the options every command builds.
:func:`tool_test_cases` reads the cases from the same roots with the same template
variables; a ToolTest the compile refused never gets this far.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.compile_result import CompileResult
from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.tooltests.cases import ToolCase, case_of, inline_tool_test, is_tool_test
from compiler.tooltests.clock import FastForwardLoop

TOOLTEST_INVALID = Code("tooltest-invalid", "a tool-test case is not valid")
CODES = (TOOLTEST_INVALID,)


def compile_tree(request: Any, output_format: str) -> CompileResult:
    """Compile the tree ``request`` (a ``CompileRequest``) names, exactly as compile does."""
    from compiler.tree_compile import compile_options_for
    from compiler.tree_compile import compile_tree as compile_request

    return compile_request(request, options=compile_options_for(request, output_format))


def tool_test_cases(request: Any) -> tuple[list[ToolCase], list[Diagnostic]]:
    """Every case of the ToolTest documents under the roots ``request`` compiles."""
    from compiler.project import read_project_settings
    from compiler.source.discovery import discover
    from compiler.source.documents import load_files
    from compiler.source.templates import load_template_variables

    project = read_project_settings()
    roots = list(request.sources or project.roots)
    base: Path | None = None if request.sources else project.root
    variables: dict[str, Any] = {}
    variable_files = list(request.variables or project.variables)
    if variable_files:
        variables, _ = load_template_variables(variable_files)
    documents, problems = load_files(discover(roots, base), variables)
    cases: list[ToolCase] = []
    for found in documents:
        document = found if is_tool_test(found) else inline_tool_test(found)
        if document is None:
            continue
        for index in range(len(document.data.get("cases") or ())):
            try:
                cases.append(case_of(document, index))
            except ValueError as error:
                problems.append(Diagnostic.error(document.location(("cases", index)),
                                                 TOOLTEST_INVALID, str(error)))
    return cases, problems


@dataclass(frozen=True, slots=True)
class TestRun:
    """What replaying found: per case, its findings (empty: it passed)."""

    findings: tuple[tuple[ToolCase, tuple[Diagnostic, ...]], ...]

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Every finding, sorted."""
        return tuple(sorted(d for _, found in self.findings for d in found))

    def summary(self) -> str:
        """``N cases: P passed, F failed``."""
        failed = sum(1 for _, found in self.findings if found)
        total = len(self.findings)
        return (f"{total} case{'s' * (total != 1)}: {total - failed} passed, "
                f"{failed} failed")


def cases_in_profile(cases: Sequence[ToolCase], manifest: Mapping[str, Any],
                     profile: str | None) -> list[ToolCase]:
    """The cases of ``profile``'s capabilities (all cases for None); KeyError: no profile."""
    if profile is None:
        return list(cases)
    for entry in manifest.get("profiles", ()):
        if entry.get("name") == profile:
            codes = set(entry.get("capabilities", ()))
            return [case for case in cases if case.code in codes]
    raise KeyError(profile)


def replay_all(cases: Sequence[ToolCase], manifest: Mapping[str, Any],
               policy: EgressPolicy | None = None) -> TestRun:
    """Replay ``cases`` against the compiled ``manifest``, offline, without waiting.

    ``policy``: the compile options' address policy (a recorded redirect to a refused
    host is refused as live); None refuses nothing."""
    from compiler.runtime.api.tool import ApiToolBlueprint, make_blueprint
    from compiler.runtime.errors import CapabilityUnavailable
    from compiler.tooltests.replaying import TOOLTEST_SETUP, capabilities_of, replay_case

    capabilities = capabilities_of(manifest)
    # One blueprint per capability for the whole run, as a loaded manifest keeps one.
    blueprints: dict[str, ApiToolBlueprint | None] = {}

    def blueprint_of(code: str) -> ApiToolBlueprint | None:
        if code not in blueprints:
            try:
                blueprints[code] = make_blueprint(capabilities[code])
            except CapabilityUnavailable:
                blueprints[code] = None  # replay_case reports it, case by case
        return blueprints[code]

    async def run() -> list[tuple[ToolCase, tuple[Diagnostic, ...]]]:
        results: list[tuple[ToolCase, tuple[Diagnostic, ...]]] = []
        for case in cases:
            capability = capabilities.get(case.code)
            found: tuple[Diagnostic, ...]
            if capability is None or capability.api is None:
                found = (Diagnostic.error(case.location(), TOOLTEST_SETUP,
                                          f"case {case.name!r}: no api capability "
                                          f"{case.code!r} in the manifest"),)
            else:
                found = tuple(await replay_case(case, capability, blueprint_of(case.code),
                                                policy))
            results.append((case, found))
        return results

    with asyncio.Runner(loop_factory=FastForwardLoop) as runner:
        return TestRun(tuple(runner.run(run())))
