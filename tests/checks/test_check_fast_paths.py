"""The shortcuts of the checks and of normalisation give the general path's answers.

Each shortcut skips work only where the skipped work cannot change the result: frozen
values of exact JSON types, a host judged once for two checks, final names located only
on a clash, api checks one at a time over all documents (back: it buys 8-10 ms now).
(The ASCII-host, flat-parameter, built-in-place freezing, untouched-schema and remembered
host and header answers were removed: each bought under about 3 ms on the bench corpus,
docs/performance.md "Fast paths".)
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks.parameter_rules import check_parameters, walked_parameters
from compiler.compile_result import CompileOptions
from compiler.normalize import capability_entry
from compiler.overrides import apply_tree_overrides
from compiler.pipeline import compile_documents
from compiler.runtime.egress.urls import url_shape_problem
from compiler.runtime.manifest.fields import freeze, json_copy, thaw
from compiler.runtime.manifest.parameters import walk_parameter
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath

def _documents(text: str) -> list[SourceDocument]:
    documents, problems = parse_source("a.yaml", text.encode(), {})
    assert not problems, problems
    return documents


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_freeze_and_thaw_round_trip_deeply(value: Any) -> None:
    frozen = freeze(value)
    assert thaw(frozen) == value
    assert freeze(frozen) == frozen
    pending = [frozen]
    while pending:  # nothing mutable is left anywhere inside
        node = pending.pop()
        assert not isinstance(node, dict | list)
        if isinstance(node, MappingProxyType):
            pending += node.values()
        elif isinstance(node, tuple):
            pending += node


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_json_copy_is_deepcopy_for_json(value: Any) -> None:
    copied = json_copy(value)
    assert copied == copy.deepcopy(value)
    pending = [(value, copied)]
    while pending:  # no container is shared with the original
        original, made = pending.pop()
        if isinstance(original, dict | list):
            assert made is not original
            pairs = zip(original.values(), made.values(), strict=True) \
                if isinstance(original, dict) else zip(original, made, strict=True)
            pending += pairs


def test_freeze_keeps_reading_mapping_and_list_subclasses() -> None:
    """Exact types take the shortcut; other mappings and lists the general path."""
    class Items(list[Any]):
        pass

    frozen = freeze(OrderedDict(a=Items([1, {"b": 2}])))
    assert isinstance(frozen, MappingProxyType)
    assert frozen["a"] == (1, MappingProxyType({"b": 2}))
    assert thaw(MappingProxyType(OrderedDict(a=(1,)))) == {"a": [1]}


def test_walk_of_flat_and_nested_entries() -> None:
    flat = walk_parameter({"type": "string"}, ("options", "params", "q"), "q")
    assert [(node.path, node.depth, node.field) for node in flat] == [
        (("options", "params", "q"), 1, "q")]
    # Keys that hold no mapping are no children (the schema reports them).
    odd = walk_parameter({"type": "array", "items": "string", "properties": None},
                         ("p",), "p")
    assert len(odd) == 1
    nested = walk_parameter(
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object",
         "additional_properties": {"type": "integer"}}}, "b": {"type": "string"}}},
        ("p",), "p")
    assert [node.field for node in nested] == ["p", "p.a", "p.a[]", "p.a[].*", "p.b"]
    assert walk_parameter("not a mapping", ("p",), "p") == []


DEEP_AND_BAD = """\
apiVersion: capc/v1
kind: Capability
code: c
name: C
description: d
type: api
options:
  description: d
  method: POST
  url: https://api.example.com/x
  body:
    n: {type: number, default: "1", style: json}
    deep: {type: object, properties: {a: {type: object, properties: {b: {type: object,
      properties: {c: {type: string, format: nope, default: 2}}}}}}}
"""


def test_parameter_checks_with_and_without_a_shared_walk() -> None:
    [document] = _documents(DEEP_AND_BAD)
    options = document.data["options"]
    alone = check_parameters(document, options)
    assert {d.code for d in alone} == {"api-default-type", "api-parameter-style",
                                       "api-parameter-format"}
    assert check_parameters(document, options, walked_parameters(options)) == alone


PRIVATE_SPELLED = """\
apiVersion: capc/v1
kind: Capability
code: c
name: C
description: d
type: api
options:
  description: d
  url: https://10.0.0.%31/x
"""


def test_allowed_network_does_not_hide_the_host_spelling_rule() -> None:
    """The spelling check judges the host under the default policy, not under the
    allowed networks: reusing the allowed answer would add a percent-encoding error."""
    documents = _documents(PRIVATE_SPELLED)
    allowed = compile_documents(documents, CompileOptions(allowed_networks=("10.0.0.0/8",)))
    assert [d.code for d in allowed.diagnostics] == []
    refused = compile_documents(documents)
    assert [d.code for d in refused.diagnostics] == ["url-private-address"]


def test_url_shape_reads_the_port_once_and_still_refuses_port_zero() -> None:
    problem = url_shape_problem("https://api.example.com:0/x")
    assert problem is not None and "port is 0" in problem.reason
    assert url_shape_problem("https://api.example.com:443/x") is None


OVERRIDDEN = """\
apiVersion: capc/v1
kind: Capability
code: one
name: One
description: d
type: api
options: {description: d, url: "https://api.example.com/1"}
---
apiVersion: capc/v1
kind: Capability
code: two
name: Two
description: d
type: api
options: {description: d, url: "https://api.example.com/2"}
---
apiVersion: capc/v1
kind: ToolOverride
tool: two
description_append: " More."
"""


def test_overrides_replace_only_the_tools_they_change() -> None:
    *capabilities, override = _documents(OVERRIDDEN)
    built = [capability_entry(document) for document in capabilities]
    tools = {entry.tool.original_name: (entry.tool, tuple(entry.api.arguments))
             for entry in built if entry.tool is not None and entry.api is not None}
    result = apply_tree_overrides([override], tools)
    one, two = result.applied_to(built)
    assert one is built[0]
    assert two is not built[1] and two.tool is not None and built[1].tool is not None
    assert two.tool.description == "d More."
    # A text-only override leaves the schema as it was (an equal frozen value).
    assert two.tool.input_schema == built[1].tool.input_schema


def test_api_checks_over_many_documents_find_what_each_document_finds() -> None:
    """check_api_documents over all documents finds what check_api finds for each
    document alone."""
    from compiler.checks.api import check_api, check_api_documents
    from compiler.runtime.egress.addresses import EgressPolicy
    from compiler.schema.kinds import classify
    from compiler.schema.validation import validate_document
    from compiler.source.discovery import discover
    from compiler.source.documents import load_files
    from tests.support.paths import CASES

    documents = []
    for source in sorted(CASES.glob("*/*/src")):
        loaded, _ = load_files(discover([str(source)], source.parent))
        for document in loaded:
            valid, kind, problems = classify(document)
            if valid is not None and kind == "Capability" and not problems \
                    and not validate_document(valid, kind) and valid.data["type"] == "api":
                documents.append(valid)
    assert len(documents) > 50
    policy = EgressPolicy(False, ())
    each = [check_api(document, False, policy) for document in documents]
    assert sum(map(len, each)) > 50  # the bad cases: plenty to find
    together = check_api_documents(documents, False, policy)
    assert sorted(together) == sorted(d for found in each for d in found)


def relabelled_tools(n: int) -> Any:
    """n api tools relabelled by n overrides, and n plugin tools relabelled too."""
    from compiler.checks.final_names import check_final_tool_names
    from compiler.runtime.manifest.model import ApiToolEntry
    from compiler.source.yaml_loader import PositionMap

    positions = PositionMap({(): (1, 1)})
    overrides = [SourceDocument(f"o{i}.yaml", 0, {"tool": tool, "namespace": "ns"},
                                positions, 1)
                 for i in range(n) for tool in (f"t{i}", f"p{i}")]
    api_tools = {f"t{i}": ApiToolEntry(name=f"ns__t{i}", original_name=f"t{i}",
                                       description="d", input_schema={}) for i in range(n)}
    plugin_tools = {f"p{i}" for i in range(n)}
    return lambda: check_final_tool_names(overrides, api_tools, plugin_tools)


def test_final_tool_names_are_checked_in_linear_time() -> None:
    """Each tool's overrides are found through one index, not by scanning every override
    per relabelled tool (quadratic in a tree of namespace overrides)."""
    from tests.support.complexity import assert_linear

    assert relabelled_tools(3)() == []
    assert_linear("tests.checks.test_check_fast_paths:relabelled_tools", 300, time_limit=120)
