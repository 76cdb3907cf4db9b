"""Descriptor overrides: merge patch, composition, copies, namespaces."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.runtime.descriptors import (
    ToolDescriptor,
    ToolOverride,
    apply_override,
    merge_patch,
    relabel_namespace,
    split_namespace,
)

SCHEMA = {"type": "object", "properties": {"content": {"type": "string"},
                                           "category": {"type": "string"}},
          "required": ["content"]}


def test_merge_patch_follows_rfc_7386_examples() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}}
    assert merge_patch(target, {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert merge_patch({"a": ["b"]}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "foo"}, None) is None
    assert merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert merge_patch([1, 2], {"a": {"b": None}}) == {"a": {}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=10)


@given(json_values, json_values)
def test_merge_patch_never_mutates_its_inputs(target: object, patch: object) -> None:
    before = (copy.deepcopy(target), copy.deepcopy(patch))
    merge_patch(target, patch)
    assert (target, patch) == before


def test_overrides_compose_in_order_and_work_on_copies() -> None:
    original = ToolDescriptor("memory__remember", "orig", copy.deepcopy(SCHEMA))
    first = apply_override(original, ToolOverride("memory__remember", description="step 1"))
    second = apply_override(first, ToolOverride("memory__remember",
                                                description_append=" | step 2"))
    assert second.description == "step 1 | step 2"
    patched = apply_override(second, ToolOverride(
        "memory__remember",
        input_schema_patch={"properties": {"category": {"enum": ["memory:health"]}}}))
    assert patched.input_schema["properties"]["category"] == {"type": "string",
                                                              "enum": ["memory:health"]}
    assert patched.input_schema["properties"]["content"] == {"type": "string"}
    assert original.input_schema == SCHEMA and original.description == "orig"


def test_namespace_relabel_changes_the_exposed_name() -> None:
    original = ToolDescriptor("memory__remember", "d", SCHEMA)
    relabelled = apply_override(original, ToolOverride("memory__remember", namespace="recall"))
    assert (relabelled.name, relabelled.namespace) == ("recall__remember", "recall")
    assert relabelled.original_name == "memory__remember"
    assert split_namespace("plain") == (None, "plain")
    assert relabel_namespace("plain", "ns") == "ns__plain"


def test_an_override_must_set_something_and_knows_its_fields() -> None:
    with pytest.raises(ValueError, match="sets no patch field"):
        ToolOverride("x")
    with pytest.raises(ValueError, match="unknown override fields"):
        ToolOverride.from_patch("x", {"descripton": "typo"})
    override = ToolOverride("x", namespace="n", description="d")
    assert override.fields() == ["description", "namespace"]
    assert override.as_patch() == {"description": "d", "namespace": "n"}


def test_an_owned_descriptor_shares_only_the_schemas_the_override_leaves_alone() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    output = {"type": "object"}
    overrides = [
        ToolOverride(tool="t", description="new"),
        ToolOverride(tool="t", input_schema={"type": "object", "properties": {}}),
        ToolOverride(tool="t", input_schema_patch={"properties": {"q": {"maxLength": 3}}}),
        ToolOverride(tool="t", output_schema_patch={"title": "x"}, namespace="ns"),
        ToolOverride(tool="t", output_schema={"type": "array"}, consumer_only=("q",)),
    ]
    for override in overrides:
        descriptor = ToolDescriptor(name="t", description="d", input_schema=schema,
                                    output_schema=output, consumer_only=frozenset({"z"}))
        copied = apply_override(descriptor, override)
        shared = apply_override(descriptor, override, owned=True)
        assert shared == copied, override
        assert copied.input_schema is not schema and copied.output_schema is not output
        untouched = override.input_schema is None and override.input_schema_patch is None
        assert (shared.input_schema is schema) == untouched, override
        if override.input_schema is not None:
            assert shared.input_schema is not override.input_schema
        assert schema["required"] == ["q"] and output == {"type": "object"}
