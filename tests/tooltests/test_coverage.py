"""Coverage in review: ``[tool.capc] require_tool_tests`` wants a case or an explicit
``untested: REASON`` per api capability; ``capc diff`` shows cases added, removed, changed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tooltests.conftest import Project, weather_yaml

REQUIRED = '[tool.capc]\nroots = ["capabilities"]\nallow_private_networks = true\n' \
           'require_tool_tests = true\n'


def test_an_api_tool_without_a_case_is_a_warning_then_an_error_under_strict(
        project: Project) -> None:
    (project.root / "pyproject.toml").write_text(REQUIRED)
    project.write("weather.yaml", weather_yaml(project.server.base_url))
    loose = project.capc("validate")
    assert loose.returncode == 0
    assert "capabilities/weather.yaml:3:7: warning[tooltest-missing]" in loose.stderr
    strict = project.capc("validate", "--strict")
    assert strict.returncode == 1
    assert "error[tooltest-missing]" in strict.stderr
    assert "capc record weather" in strict.stderr


def test_untested_with_a_reason_or_a_case_satisfies_coverage(project: Project) -> None:
    (project.root / "pyproject.toml").write_text(REQUIRED)
    project.write("weather.yaml", weather_yaml(project.server.base_url)
                  + "untested: the sandbox has no weather service\n")
    assert "tooltest-missing" not in project.capc("validate", "--strict").stderr
    project.write("weather.yaml", weather_yaml(project.server.base_url))
    assert project.record("weather", {"city": "Oslo"}).returncode == 0
    covered = project.capc("validate", "--strict")
    assert "tooltest-missing" not in covered.stderr


def _manifest(project: Project, name: str) -> Path:
    out = project.root / name
    done = project.capc("compile", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_capc_diff_shows_cases_added_removed_and_changed(project: Project) -> None:
    project.write("weather.yaml", weather_yaml(project.server.base_url))
    assert project.record("weather", {"city": "Oslo"}, "--name", "oslo").returncode == 0
    assert project.record("weather", {"city": "Rome"}, "--name", "rome").returncode == 0
    old = _manifest(project, "old.json")
    case_file = project.root / "capabilities" / "weather.test.yaml"
    text = case_file.read_text()
    text = text.replace("name: rome", "name: roma")          # removed rome, added roma
    text = text.replace('"temp": 12}, "units": "metric"}\'\n  result: \'{"city":"Oslo"',
                        '"temp": 13}, "units": "metric"}\'\n  result: \'{"city":"Oslo"')
    case_file.write_text(text)
    new = _manifest(project, "new.json")
    done = project.capc("diff", str(old), str(new), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    cases = {(entry["key"], entry["status"]) for entry in report["entries"]
             if entry["kind"] == "tool-test"}
    assert cases == {("weather/roma", "added"), ("weather/rome", "removed"),
                     ("weather/oslo", "changed")}
    assert "tool test cases 1 added, 1 removed, 1 changed" in report["summary"]
    text_report = project.capc("diff", str(old), str(new))
    assert "+ tool-test weather/roma added" in text_report.stdout
    assert "~ tool-test weather/oslo changed" in text_report.stdout
