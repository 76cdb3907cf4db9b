"""``tests:`` inside a capability: the same cases as a ToolTest file, located in the
capability, replayed by ``capc test``."""

from __future__ import annotations

from tests.tooltests.conftest import Project

INLINE = """\
apiVersion: capc/v1
kind: Capability
code: plain
name: Plain
type: api
options:
  description: A plain GET
  url: {base}/v1/plain
  params:
    q: {{type: string, required: true, description: Query}}
tests:
  - name: one
    arguments: {{q: x}}
    exchanges:
      - request: {{method: GET, url: "{base}/v1/plain?q=x"}}
        response: {{status: 200, body: ok}}
    result: {result}
"""


def test_inline_cases_replay_and_fail_in_the_capability(project: Project) -> None:
    base = project.server.base_url
    project.stop()
    project.write("plain.yaml", INLINE.format(base=base, result="ok"))
    passed = project.capc("test")
    assert passed.returncode == 0, passed.stderr
    assert "1 case: 1 passed" in passed.stderr
    project.write("plain.yaml", INLINE.format(base=base, result="not ok"))
    failed = project.capc("test")
    assert failed.returncode == 1
    assert "capabilities/plain.yaml:17:13: error[tooltest-result]" in failed.stderr, \
        failed.stderr


def test_inline_cases_are_schema_checked_where_they_are(project: Project) -> None:
    base = project.server.base_url
    project.write("plain.yaml", INLINE.format(base=base, result="ok").replace(
        "status: 200", "status: 99"))
    done = project.capc("validate")
    assert done.returncode == 1
    assert "capabilities/plain.yaml:16:28: error[schema-minimum]" in done.stderr, done.stderr


def test_inline_cases_count_in_the_manifest_and_for_coverage(project: Project) -> None:
    base = project.server.base_url
    (project.root / "pyproject.toml").write_text(
        '[tool.capc]\nroots = ["capabilities"]\nallow_private_networks = true\n'
        'require_tool_tests = true\n')
    project.write("plain.yaml", INLINE.format(base=base, result="ok"))
    done = project.capc("compile", "-o", "m.json")
    assert done.returncode == 0, done.stderr
    assert "tooltest-missing" not in done.stderr
    assert '"plain": {\n      "one": "' in (project.root / "m.json").read_text()
