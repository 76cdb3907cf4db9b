"""What namespaces cost and how they count, compiled from YAML: on OpenAI a namespace's
name and description are sent up front (counted like a function without parameters,
checked against tiktoken's own BPE), a deferred function outside a namespace still shows
its name and description, each namespace is one more entry toward the tool limits, and
tool names stay unique across namespaces (LangChain finds a tool by its bare name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.manifest import manifest_model
from compiler.profiles.budget import profile_costs
from compiler.profiles.tokens import FUNCTION_INIT, FUNCTIONS_END, o200k, tiktoken_reference
from compiler.runtime.manifest.model import parse_manifest_document
from tests.profiles.trees import CRM, WEATHER
from tests.support.runtime import internal_capability, manifest_document
from tests.support.trees import build_documents as compile_tree

pytest.importorskip("toktok")

TOOLS = WEATHER + "---\n" + CRM
NAMESPACE_DESCRIPTION = "Contacts in the CRM: search them and create them."
PROFILES = f"""\
apiVersion: capc/v1
kind: Profile
name: plain-bot
capabilities: [get_weather]
---
apiVersion: capc/v1
kind: Profile
name: deferred-bot
capabilities: [get_weather, crm_*]
deferred: [crm_*]
---
apiVersion: capc/v1
kind: Profile
name: grouped-bot
capabilities: [get_weather, crm_*]
deferred: [crm_*]
namespaces:
  - name: crm
    description: "{NAMESPACE_DESCRIPTION}"
    capabilities: [crm_*]
"""


def reference_line(name: str, description: str) -> int:
    """The recipe's figure of a parameterless function, on tiktoken's BPE: 7 plus
    ``name:description`` with a final period dropped."""
    text = f"{name}:{description[:-1] if description.endswith('.') else description}"
    return FUNCTION_INIT + len(tiktoken_reference().encode(text))


def test_a_namespace_costs_its_line_and_hides_its_functions_lines(tmp_path: Path) -> None:
    result = compile_tree(tmp_path, TOOLS, PROFILES)
    assert result.manifest is not None, result.diagnostics
    parsed = manifest_model(result.manifest)
    costs = {cost.profile.name: cost.on("openai")
             for cost in profile_costs(parsed.profiles, parsed.capabilities, {}, o200k())}
    plain, deferred, grouped = costs["plain-bot"], costs["deferred-bot"], costs["grouped-bot"]
    # Same up-front function and the same search tool: the overheads differ only by what
    # the tool search can load, as the model is shown it.
    assert deferred.overhead - grouped.overhead == (
        reference_line("crm_search", "Search contacts in the CRM by name, e-mail address or "
                       "company.")
        + reference_line("crm_create", "Create a contact in the CRM.")
        - reference_line("crm", NAMESPACE_DESCRIPTION))
    search_tool = grouped.overhead - plain.overhead - reference_line("crm", NAMESPACE_DESCRIPTION)
    assert 0 < search_tool < 10  # {"type":"tool_search"}, an estimate
    assert [tool.tokens for tool in grouped.upfront] == [tool.tokens for tool in plain.upfront]
    assert (grouped.namespaces, deferred.namespaces, plain.namespaces) == (1, 0, 0)
    # Anthropic shows nothing of deferred tools: namespaces change nothing there.
    anthropic = {cost.profile.name: cost.on("anthropic").upfront_tokens
                 for cost in profile_costs(parsed.profiles, parsed.capabilities, {}, o200k())}
    assert anthropic["grouped-bot"] == anthropic["deferred-bot"]


def test_a_namespace_is_one_more_entry_toward_the_tools_budget(tmp_path: Path) -> None:
    profile = PROFILES.split("---\n")[2] + "budget: {tools: 2}\n"
    result = compile_tree(tmp_path, TOOLS, profile)
    assert result.manifest is None
    (problem,) = [d for d in result.diagnostics if d.is_error]
    # get_weather, the namespace crm and the tool search.
    assert problem.code == "profile-over-budget"
    assert "sends 3 tools up front, over its budget of 2" in problem.message
    assert compile_tree(tmp_path, TOOLS, profile.replace("tools: 2", "tools: 3")).manifest


def test_tool_names_stay_unique_across_namespaces(tmp_path: Path) -> None:
    twin = TOOLS.split("---\n")[1].replace("code: crm_search", "code: crm_search_two")
    twin += "  name: crm_search\n"  # the api tool's name, as crm_search's
    profile = PROFILES.split("---\n")[2].replace(
        "capabilities: [crm_*]\n", "capabilities: [crm_search]\n"
        "  - name: crm_twin\n    description: The same search again.\n"
        "    capabilities: [crm_search_two]\n")
    result = compile_tree(tmp_path, TOOLS, twin, profile)
    assert result.manifest is None
    codes = [d.code for d in result.diagnostics if d.is_error]
    assert "profile-duplicate-tool" in codes, result.diagnostics


def many_tools(count: int) -> str:
    return "---\n".join(TOOLS.split("---\n")[0].replace("get_weather", f"tool_{index:03d}")
                        for index in range(count))


def test_namespaced_deferred_functions_do_not_count_toward_openai_128(tmp_path: Path) -> None:
    profile = """\
apiVersion: capc/v1
kind: Profile
name: big-bot
capabilities: [tool_*]
deferred: [tool_0*, tool_10*, tool_11*]
namespaces:
  - name: tools_a
    description: The first hundred tools.
    capabilities: [tool_0*]
  - name: tools_b
    description: The next twenty.
    capabilities: [tool_10*, tool_11*]
"""
    result = compile_tree(tmp_path, many_tools(130), profile)
    assert result.manifest is not None, result.diagnostics
    # 10 up front (tool_120..tool_129), 2 namespaces and the tool search.
    parsed = manifest_model(result.manifest)
    (cost,) = profile_costs(parsed.profiles, parsed.capabilities, {}, o200k())
    openai = cost.on("openai")
    assert (len(openai.upfront), openai.namespaces, len(openai.deferred)) == (10, 2, 120)
    # OpenAI advises fewer than 10 functions per namespace: said, not refused.
    assert sorted({d.code for d in result.diagnostics}) == ["profile-namespace-large"]
    assert [d.message.split(";")[0] for d in result.diagnostics] == [
        "namespace 'tools_a' holds 100 functions", "namespace 'tools_b' holds 20 functions"]


def test_a_multi_tool_internal_capability_is_counted_as_its_own_namespace() -> None:
    memory = {**internal_capability("memory"), "description": "Facts the agent keeps."}
    document = manifest_document([memory, internal_capability("notes")])
    document["profiles"] = [{
        "name": "memory-bot", "description": None, "capabilities": ["memory", "notes"],
        "deferred": ["memory", "notes"], "budget": {},
        "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
    schema = {"type": "object", "properties": {"fact": {"type": "string"}}}
    recorded = {name: {"name": name, "description": f"{name} it.", "input_schema": schema}
                for name in ("memory_remember", "memory_recall", "take_note")}
    plugins = {"capc-memory": {
        "codes": {"memory": {"tools": ["memory_remember", "memory_recall"]},
                  "notes": {"tools": ["take_note"]}},
        "tools": recorded}}
    model = parse_manifest_document(document)
    (cost,) = profile_costs(model.profiles, model.capabilities, plugins, o200k())
    openai = cost.on("openai")
    assert openai.namespaces == 1 and len(openai.deferred) == 3
    # The request's 12, the search tool's entry, the memory namespace's line and take_note's
    # own line (alone, it stays a function), each on tiktoken's own BPE.
    search_tool = len(tiktoken_reference().encode('{"type":"tool_search"}'))
    assert openai.overhead == (FUNCTIONS_END + search_tool
                               + reference_line("memory", "Facts the agent keeps.")
                               + reference_line("take_note", "take_note it."))
