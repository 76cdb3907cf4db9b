"""The model's copy helpers (``with_tool``, ``patched``, ``moved``) are
``dataclasses.replace`` without its introspection: the same entries, every field kept."""

from __future__ import annotations

from dataclasses import fields, replace
from types import MappingProxyType

from compiler.runtime.manifest.model import (
    PROVENANCE_FIELDS,
    ApiEndpoint,
    ApiToolEntry,
    AppliedOverride,
    CapabilityEntry,
    SourceLocation,
    ToolProvenance,
)


def _tool() -> ApiToolEntry:
    here = SourceLocation("a.yaml", 3)
    return ApiToolEntry(
        name="ns__get", original_name="get", description="d",
        input_schema=MappingProxyType({"type": "object"}), output_schema=None,
        namespace="ns", provenance=ToolProvenance(here, here, here),
        overrides=(AppliedOverride("o.yaml", 1, ("description",)),), strict=True)


def _capability() -> CapabilityEntry:
    return CapabilityEntry(
        code="c", name="n", description=None, type="api",
        metadata=MappingProxyType({"ordering": 2}), when=MappingProxyType({"x": 1}),
        source=SourceLocation("a.yaml", 1), internal_codes=("i",),
        api=ApiEndpoint(url="https://example.test/"), tool=_tool(),
        origin=MappingProxyType({"generator": "g"}))


def test_with_tool_is_replace_of_the_tool_only() -> None:
    entry, other = _capability(), replace(_tool(), name="other")
    copied = entry.with_tool(other)
    assert copied == replace(entry, tool=other)
    for field in fields(CapabilityEntry):
        if field.name != "tool":
            assert getattr(copied, field.name) is getattr(entry, field.name), field.name
    assert copied.tool is other


def test_patched_keeps_original_name_and_strict() -> None:
    tool = _tool()
    changed = {"name": "x__y", "description": "new", "input_schema": MappingProxyType({}),
               "output_schema": MappingProxyType({"type": "object"}), "namespace": "x",
               "provenance": ToolProvenance(), "overrides": ()}
    assert tool.patched(**changed) == replace(tool, **changed)
    # Every field is either patched or kept: a new field must be added to ``patched``.
    assert {f.name for f in fields(ApiToolEntry)} == {*changed, "original_name", "strict"}


def test_moved_is_replace_of_the_named_fields() -> None:
    start = _tool().provenance
    for name in PROVENANCE_FIELDS:
        there = SourceLocation("o.yaml", 9)
        assert start.moved({name: there}) == replace(start, **{name: there})
    both = {"name": SourceLocation("o.yaml", 4), "namespace": SourceLocation("o.yaml", 4)}
    assert start.moved(both) == replace(start, **both)
    assert start.moved({}) == start


def test_provenance_json_names_every_field_in_order() -> None:
    for name in PROVENANCE_FIELDS:
        provenance = ToolProvenance(**{name: SourceLocation("p.yaml", 7)})
        written = provenance.to_json()
        assert list(written) == list(PROVENANCE_FIELDS)
        assert written == {field: ({"path": "p.yaml", "line": 7} if field == name else None)
                           for field in PROVENANCE_FIELDS}
    assert ToolProvenance.parse(_tool().provenance.to_json()) == _tool().provenance
