"""Record against a real loopback server, stop it, then edit the capability the way pull
requests do: ``capc test`` fails at the case field the edit changed, and says what changed."""

from __future__ import annotations

import json
import re

import pytest

from tests.tooltests.conftest import Project, weather_yaml

LOCATED = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[a-z-]+)\]: "
                     r"(?P<message>.*)$", re.MULTILINE)


def recorded(project: Project) -> None:
    project.write("weather.yaml", weather_yaml(project.server.base_url))
    done = project.record("weather", {"city": "Paris"}, "--name", "paris")
    assert done.returncode == 0, done.stderr
    assert len(project.server.received) == 1
    project.stop()  # from here on, any real connection would fail the case


def case_line(project: Project, text: str) -> int:
    """The line of the case file holding ``text`` (1-based)."""
    lines = (project.root / "capabilities" / "weather.test.yaml").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_a_recorded_case_replays_offline_with_the_upstream_stopped(project: Project) -> None:
    recorded(project)
    done = project.capc("test")
    assert done.returncode == 0, done.stderr
    assert "1 case: 1 passed, 0 failed" in done.stderr
    text = (project.root / "capabilities" / "weather.test.yaml").read_text()
    assert "result: '{\"city\":\"Paris\",\"temp\":12}'" in text


def test_replay_needs_no_real_setting(project: Project) -> None:
    recorded(project)
    done = project.capc("test", WEATHER_KEY="")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("edit", "field", "said"), [
    (dict(units_name="unit"), "url:", "query parameter \"units\" is no longer sent"),
    (dict(units_default="imperial"), "url:",
     "query parameter \"units\": expected \"metric\", the tool sent \"imperial\""),
    (dict(client_header="capc-tests-v2"), "X-Client:",
     "header X-Client: expected \"capc-tests\", the tool sent \"capc-tests-v2\""),
    (dict(select="units"), "result:", "result differs at line 1"),
], ids=["rename-query-parameter", "change-default", "change-header", "change-select"])
def test_an_edit_fails_at_the_field_it_changed(project: Project, edit: dict[str, str],
                                                field: str, said: str) -> None:
    recorded(project)
    project.write("weather.yaml", weather_yaml(project.server.base_url, **edit))
    done = project.capc("test")
    assert done.returncode == 1, done.stderr
    found = [match.groupdict() for match in LOCATED.finditer(done.stderr)]
    assert found, done.stderr
    assert {entry["path"] for entry in found} == {"capabilities/weather.test.yaml"}
    assert {int(entry["line"]) for entry in found} == {case_line(project, field)}, done.stderr
    assert any(said in entry["message"] for entry in found), done.stderr
    assert "1 case: 0 passed, 1 failed" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_renamed_query_parameter_is_named_on_both_sides(project: Project) -> None:
    recorded(project)
    project.write("weather.yaml", weather_yaml(project.server.base_url, units_name="unit"))
    done = project.capc("test", "--format", "json")
    assert done.returncode == 1
    messages = [entry["message"] for entry in json.loads(done.stdout)]
    assert any('"units" is no longer sent' in message for message in messages), messages
    assert any('"unit" is new' in message for message in messages), messages
    assert {entry["code"] for entry in json.loads(done.stdout)
            if entry["severity"] == "error"} == {"tooltest-request"}, done.stdout


def test_github_format_annotates_the_case_line(project: Project) -> None:
    recorded(project)
    project.write("weather.yaml", weather_yaml(project.server.base_url,
                                               client_header="other"))
    done = project.capc("test", "--format", "github")
    assert done.returncode == 1
    line = case_line(project, "X-Client:")
    assert f"::error file=capabilities/weather.test.yaml,line={line}," in done.stdout


def test_record_from_a_subdirectory_writes_beside_the_capability(project: Project) -> None:
    from tests.support.capc import run_capc
    from tests.tooltests.conftest import SECRET

    project.write("nested/weather.yaml", weather_yaml(project.server.base_url))
    done = run_capc("record", "weather", "--args", '{"city": "Oslo"}', "--settings-from-env",
                    cwd=project.root / "capabilities",
                    extra_env={"CAPC_NO_CACHE": "1", "WEATHER_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    assert (project.root / "capabilities" / "nested" / "weather.test.yaml").is_file()
    assert project.capc("test").returncode == 0
