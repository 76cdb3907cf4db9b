"""Namespaces in the manifest and in the source: written only when declared (older
manifests keep their bytes), read back exactly, refused when a hand-edited manifest breaks
their rules, and bounded by the Profile schema with located errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.build import build
from compiler.runtime.manifest.fields import EntryShapeError
from compiler.runtime.manifest.profile_entries import NamespaceEntry, ProfileEntry

CRM = {"name": "crm", "description": "The CRM", "capabilities": ["crm_a", "crm_b"]}
PROFILE: dict[str, Any] = {
    "name": "support-bot", "description": None, "capabilities": ["crm_a", "crm_b", "web"],
    "deferred": ["crm_a", "crm_b"], "budget": {},
    "source": {"path": "capabilities/p.yaml", "line": 1},
}


def test_namespaces_are_written_only_when_declared_and_read_back() -> None:
    plain = ProfileEntry.parse(PROFILE)
    assert "namespaces" not in plain.to_json() and plain.namespaces == ()
    grouped = ProfileEntry.parse({**PROFILE, "namespaces": [CRM]})
    assert grouped.namespaces == (NamespaceEntry("crm", "The CRM", ("crm_a", "crm_b")),)
    assert grouped.to_json() == {**PROFILE, "namespaces": [CRM]}
    assert ProfileEntry.parse(grouped.to_json()) == grouped


@pytest.mark.parametrize(("namespaces", "message"), [
    ("crm", "must be a list"),
    ([{**CRM, "description": ""}], "description must be a non-empty string"),
    ([{"name": "crm", "capabilities": []}], "missing key 'description'"),
    ([CRM, {**CRM, "capabilities": []}], "share a name"),
    ([{**CRM, "capabilities": ["web"]}], "not deferred"),
    ([CRM, {**CRM, "name": "again", "capabilities": ["crm_a"]}], "in two namespaces"),
])
def test_a_hand_edited_manifest_breaking_the_rules_is_refused(namespaces: Any,
                                                              message: str) -> None:
    with pytest.raises(EntryShapeError, match=message):
        ProfileEntry.parse({**PROFILE, "namespaces": namespaces})


TOOL = """\
apiVersion: capc/v1
kind: Capability
code: crm_a
name: CRM a
type: api
options:
  description: A.
  url: https://crm.example.com/a
---
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [crm_a]
deferred: [crm_a]
namespaces:
"""


@pytest.mark.parametrize(("namespaces", "code", "where", "line"), [
    # 51 namespaces: over the 50 allowed
    ([("crm", ["crm_a"])] * 51, "schema-maxItems", "namespaces:", 16),
    # 21 selectors: over the 20 allowed
    ([("crm", ["crm_a"] * 21)], "schema-maxItems", "namespaces[0].capabilities:", 18),
    # not a name OpenAI takes
    ([("crm.tools", ["crm_a"])], "schema-pattern", "namespaces[0].name:", 16),
])
def test_the_schema_bounds_namespaces_with_located_errors(
    tmp_path: Path, namespaces: list[tuple[str, list[str]]], code: str, where: str, line: int
) -> None:
    root = tmp_path / "capabilities"
    root.mkdir()
    listed = "".join(f"  - name: {name}\n    description: The CRM.\n    capabilities: {codes}\n"
                     for name, codes in namespaces)
    (root / "a.yaml").write_text(TOOL + listed.replace("'", ""))
    result = build([str(root)], cwd=tmp_path, use_cache=False)
    assert result.manifest is None
    (problem,) = [d for d in result.diagnostics if d.is_error]
    assert (problem.path, problem.line, problem.code) == ("capabilities/a.yaml", line, code)
    assert problem.message.startswith(where)
