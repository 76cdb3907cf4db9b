"""The compile-time checks of ``kind: ToolTest`` documents, and what the manifest records.

A ToolTest names the api capability its cases call (a capability's own ``tests:`` are
read as a ToolTest of its code); a code the tree does not define, a
capability that is not an api tool, and two cases with one name are located errors. With
coverage required (``[tool.capc] require_tool_tests``), an api capability without a case
and without ``untested: REASON`` is a warning (an error under ``--strict``).

The manifest records, per capability, a digest of each case (``tool_tests``), so
``capc diff`` of two manifests shows the cases added, removed and changed, and the
manifest stays deterministic: the digest is of the case's canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.source.documents import SourceDocument

TOOLTEST_DUPLICATE_CASE = Code("tooltest-duplicate-case", "two tool-test cases share a name")
TOOLTEST_MISSING = Code(
    "tooltest-missing", "an api capability has no tool-test case", Severity.WARNING)
TOOLTEST_NOT_API = Code(
    "tooltest-not-api", "a tool test names a capability that is not an api tool")
TOOLTEST_UNKNOWN_CODE = Code("tooltest-unknown-code", "a tool test names no capability of the tree")
CODES = (TOOLTEST_DUPLICATE_CASE, TOOLTEST_MISSING, TOOLTEST_NOT_API, TOOLTEST_UNKNOWN_CODE)

# Hex digits of a case digest kept in the manifest: enough to tell any two edits apart.
DIGEST_CHARACTERS = 16


def case_digest(case: Mapping[str, Any]) -> str:
    """A digest of one case's content (its canonical JSON), as the manifest records it."""
    canonical = json.dumps(case, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:DIGEST_CHARACTERS]


def check_tool_tests(
    tool_tests: Iterable[SourceDocument],
    capabilities: Iterable[SourceDocument],
    require_cases: bool = False,
    unresolved: Collection[str] = (),
) -> tuple[dict[str, dict[str, str]], list[Diagnostic]]:
    """Check every ToolTest against the tree's capabilities.

    ``unresolved``: codes a file that failed its own checks may define (its error is the
    one to fix, so a case of such a code is not reported as unknown). Returns the
    manifest's ``tool_tests`` section (code -> {case name -> digest}, sorted) and the
    diagnostics.
    """
    capabilities = list(capabilities)
    kinds = {document.data["code"]: document for document in capabilities}
    found: list[Diagnostic] = []
    section: dict[str, dict[str, str]] = {}
    inline, inline_problems = _inline_tests(capabilities)
    found += inline_problems
    for document in [*inline, *tool_tests]:
        code = document.data["code"]
        target = kinds.get(code)
        if target is None:
            if code in unresolved:
                continue
            found.append(_unknown_code(document, code, sorted(kinds)))
            continue
        if target.data.get("type") != "api":
            found.append(Diagnostic.error(
                document.location(("code",)), TOOLTEST_NOT_API,
                f"{code!r} is an {target.data.get('type')} capability; ToolTest cases "
                "replay api tools only"))
            continue
        digests = section.setdefault(code, {})
        for index, case in enumerate(document.data["cases"]):
            name = case["name"]
            if name in digests:
                found.append(Diagnostic.error(
                    document.location(("cases", index, "name")), TOOLTEST_DUPLICATE_CASE,
                    f"{code!r} already has a case named {name!r}; case names are unique "
                    "per capability"))
                continue
            digests[name] = case_digest(case)
    if require_cases:
        found += _uncovered(kinds.values(), section)
    ordered = {code: dict(sorted(section[code].items())) for code in sorted(section)}
    return ordered, found


def _inline_tests(
    capabilities: Iterable[SourceDocument],
) -> tuple[list[SourceDocument], list[Diagnostic]]:
    """The ``tests:`` of capabilities as ToolTest documents, each checked by the ToolTest
    schema (its errors located in the capability)."""
    from compiler.schema.validation import validate_document
    from compiler.tooltests.cases import inline_tool_test

    documents: list[SourceDocument] = []
    found: list[Diagnostic] = []
    for capability in capabilities:
        view = inline_tool_test(capability)
        if view is None:
            continue
        problems = validate_document(view, "ToolTest")
        found += problems
        if not problems:
            documents.append(view)
    return documents, found


def _unknown_code(document: SourceDocument, code: str, known: list[str]) -> Diagnostic:
    import difflib  # only an error's "did you mean" needs it

    close = difflib.get_close_matches(code, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return Diagnostic.error(document.location(("code",)), TOOLTEST_UNKNOWN_CODE,
                            f"no capability {code!r} in the tree{hint}")


def _uncovered(capabilities: Iterable[SourceDocument],
               section: Mapping[str, Mapping[str, str]]) -> list[Diagnostic]:
    """A warning per api capability with no case and no ``untested: REASON``."""
    found = []
    for document in capabilities:
        data = document.data
        if data.get("type") != "api" or data["code"] in section or data.get("untested"):
            continue
        found.append(Diagnostic.warning(
            document.location(("code",)), TOOLTEST_MISSING,
            f"api capability {data['code']!r} has no ToolTest case; record one with "
            f"`capc record {data['code']} --args JSON`, or say why with `untested: REASON`"))
    return found
