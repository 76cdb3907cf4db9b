"""``capc schema Manifest`` (compiler/schema/json/manifest-v1.json) agrees with the model.

The schema is written by hand for other languages; these tests hold it to the manifest
model: every manifest capc writes (the golden cases and the shipped capabilities/ tree)
validates, each object of the schema has exactly the keys the model's ``to_json`` writes,
and the schema is never looser than the model (what it accepts, the loader accepts).
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compiler.build import build
from compiler.runtime.manifest.format import dump_manifest
from compiler.runtime.manifest.model import (
    EntryShapeError,
    manifest_json,
    parse_capability,
    parse_manifest_document,
)
from compiler.schema.validation import schema_text
from tests.support.capc import run_capc
from tests.support.paths import CASES, REPO_ROOT
from tests.support.runtime import json_paths

SCHEMA = json.loads(schema_text("Manifest"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
GOLDEN = sorted(CASES.glob("*/*/expected-manifest.json"))


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_capc_schema_manifest_prints_it_and_all_includes_it(tmp_path: Path) -> None:
    result = run_capc("schema", "Manifest")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == SCHEMA
    published = run_capc("schema", "--all", "-o", str(tmp_path))
    assert published.returncode == 0, published.stderr
    assert json.loads((tmp_path / "manifest-v1.json").read_text()) == SCHEMA


@pytest.mark.parametrize("path", GOLDEN, ids=lambda path: path.parent.name)
def test_every_golden_manifest_validates(path: Path) -> None:
    VALIDATOR.validate(json.loads(path.read_bytes()))


def test_the_shipped_capabilities_tree_validates(tmp_path: Path, in_dir: Any) -> None:
    in_dir(REPO_ROOT)
    result = build(["capabilities"], use_cache=False)
    assert result.manifest is not None, result.diagnostics
    VALIDATOR.validate(json.loads(dump_manifest(result.manifest)))


def _manifests() -> list[dict[str, Any]]:
    return [json.loads(path.read_bytes()) for path in GOLDEN]


def _keys_by_definition() -> dict[str, set[str]]:
    """The keys ``to_json`` writes, per schema definition, over every golden entry."""
    found: dict[str, set[str]] = {}

    def add(name: str, written: dict[str, Any]) -> None:
        found.setdefault(name, set()).update(written)

    for manifest in _manifests():
        model = parse_manifest_document(manifest)
        written = manifest_json(model)
        add("manifest", {**written, "digest": manifest["digest"]})
        for entry in written["capabilities"]:
            add("capability", entry)
            add("source", entry["source"])
            for block in ("internal", "mcp", "api", "tool"):
                if block in entry:
                    add(block, entry[block])
            for argument in entry.get("api", {}).get("arguments", {}).values():
                add("argument", argument)
            for pinned in entry.get("mcp", {}).get("pins", {}).get("tools", []):
                add("pinnedTool", pinned)
                for applied in pinned["overrides"]:
                    add("appliedOverride", applied)
            tool = entry.get("tool")
            if tool:
                add("provenance", tool["provenance"])
                for applied in tool["overrides"]:
                    add("appliedOverride", applied)
        for pending in written["overrides"]:
            add("pendingOverride", pending)
        for profile in written.get("profiles", []):
            add("profile", profile)
            add("source", profile["source"])
    return found


def _schema_keys(name: str) -> set[str]:
    if name == "manifest":
        return set(SCHEMA["properties"])
    if name == "provenance":
        return set(SCHEMA["$defs"]["tool"]["properties"]["provenance"]["properties"])
    return set(SCHEMA["$defs"][name]["properties"])


def test_each_schema_object_has_the_keys_the_model_writes() -> None:
    written = _keys_by_definition()
    assert set(written) >= {"manifest", "capability", "internal", "mcp", "api", "tool",
                            "argument", "appliedOverride", "pendingOverride", "source",
                            "pinnedTool", "profile"}
    for name, keys in written.items():
        assert keys == _schema_keys(name), name


MUTANTS: list[Any] = [None, 0, 1, -1, 1.5, "", "x", True, [], ["path"], [1], {}, {"a": 1},
                      {"bindings": ["query"], "type": "string"}, "GET", {"path": "p"}]


def test_the_schema_is_never_looser_than_the_model() -> None:
    entries = [entry for manifest in _manifests() for entry in manifest["capabilities"]]
    generator = random.Random(5)
    accepted = refused = 0
    for _ in range(3000):
        entry = copy.deepcopy(generator.choice(entries))
        for _ in range(generator.randint(1, 2)):
            where = generator.choice(json_paths(entry))
            parent = entry
            for key in where[:-1]:
                parent = parent[key]
            if isinstance(parent, dict) and generator.random() < 0.3:
                del parent[where[-1]]
            else:
                parent[where[-1]] = copy.deepcopy(generator.choice(MUTANTS))
        schema_ok = not list(VALIDATOR.evolve(
            schema={**SCHEMA, "$ref": "#/$defs/capability"}).iter_errors(entry))
        try:
            parse_capability(entry)
        except EntryShapeError:
            assert not schema_ok, entry
            refused += 1
        else:
            accepted += 1
    assert accepted > 100 and refused > 500
