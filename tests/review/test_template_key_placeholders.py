"""A ``${SETTING}`` used as a body_template *key* is a secret the manifest must list.

The runtime resolves settings in template keys (``compiler.runtime.api.request``), so a
key placeholder is a setting the capability needs: it belongs in ``placeholders``, and
``capc diff`` must call it out as security relevant, like one in a value.
"""

from __future__ import annotations

from pathlib import Path

from compiler.build import build
from compiler.review.diff import diff_manifests
from compiler.runtime.placeholders import placeholders_in

BEFORE = """\
apiVersion: capc/v1
kind: Capability
code: create_ticket
name: Tickets
type: api
options:
  description: Open a ticket
  method: POST
  url: https://tickets.example.com/v1/tickets
  body_template:
    title: "{title}"
  body_params:
    title: {type: string, description: Ticket title}
"""
AFTER = BEFORE.replace('    title: "{title}"\n', '    title: "{title}"\n    "${TENANT}": tenant\n')


def compile_text(root: Path, text: str) -> dict:
    (root / "capabilities").mkdir(parents=True, exist_ok=True)
    (root / "capabilities" / "ticket.yaml").write_text(text)
    result = build([str(root / "capabilities")], cwd=root, use_cache=False)
    assert result.manifest is not None, result.diagnostics
    return result.manifest


def test_a_key_placeholder_is_recorded_and_flagged_by_diff(tmp_path: Path, in_dir) -> None:
    assert AFTER != BEFORE
    in_dir(tmp_path)
    before = compile_text(tmp_path / "before", BEFORE)
    after = compile_text(tmp_path / "after", AFTER)
    [entry] = after["capabilities"]
    assert entry["api"]["body_template"] == {"title": "{title}", "${TENANT}": "tenant"}
    assert entry["api"]["placeholders"] == ["TENANT"]
    diff = diff_manifests(before, after)
    assert [(f.kind, f.entry, f.message) for f in diff.security] == [
        ("new-placeholder", "create_ticket", "now needs the secret setting ${TENANT}")]


def test_the_one_scan_covers_keys_values_and_nesting() -> None:
    value = ["https://x/${A}", {"Authorization": "Bearer ${B}"},
             {"${C}": {"deep": [{"${D}": "${E}"}]}, "plain": "{slot}"}]
    assert placeholders_in(value) == ["A", "B", "C", "D", "E"]
    assert placeholders_in({"$${x}": "${lower_ok}", "{slot}": 1}) == ["lower_ok", "x"]
    deep: object = "${DEEP}"
    for _ in range(5000):  # iterative: a deep template cannot exhaust the stack
        deep = {"k": [deep]}
    assert placeholders_in(deep) == ["DEEP"]
