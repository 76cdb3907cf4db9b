"""``capc test --refresh``: the live API again, what changed in its contract, and
``--write`` to take the new recording."""

from __future__ import annotations

import json

from tests.support.runtime import ReceivedRequest
from tests.tooltests.conftest import Project, weather_reply, weather_yaml


def recorded(project: Project) -> None:
    project.write("weather.yaml", weather_yaml(project.server.base_url, select="'@'"))
    done = project.record("weather", {"city": "Paris"}, "--name", "paris")
    assert done.returncode == 0, done.stderr


def changed_reply(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    status, headers, body = weather_reply(request)
    data = json.loads(body)
    del data["current"]["temp"]               # removed
    data["current"]["humidity"] = 0.4         # added
    data["units"] = 1                         # retyped
    return status, {**headers, "Link": '<https://x/next>; rel="next"'}, json.dumps(data).encode()


def test_no_contract_change_is_quiet_even_when_values_move(project: Project) -> None:
    recorded(project)

    def warmer(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        status, headers, body = weather_reply(request)
        return status, headers, body.replace(b'"temp": 12', b'"temp": 14')

    project.server.responder = warmer
    done = project.capc("test", "--refresh", "--settings-from-env")
    assert done.returncode == 0, done.stderr
    assert "tooltest-drift" not in done.stderr


def test_refresh_reports_fields_removed_added_retyped_and_pagination(project: Project) -> None:
    recorded(project)
    before = (project.root / "capabilities" / "weather.test.yaml").read_text()
    project.server.responder = changed_reply
    done = project.capc("test", "--refresh", "--settings-from-env")
    assert done.returncode == 1
    drift = done.stderr
    assert "field $.current.temp (number) was removed" in drift
    assert "field $.current.humidity (number) was added" in drift
    assert "field $.units changed type: string is now number" in drift
    assert "pagination: Link relations (none) are now ['next']" in drift
    assert "capabilities/weather.test.yaml:" in drift and "warning[tooltest-drift]" in drift
    assert (project.root / "capabilities" / "weather.test.yaml").read_text() == before


def test_refresh_reports_status_and_content_type(project: Project) -> None:
    recorded(project)
    project.server.responder = lambda request: (503, {"Content-Type": "text/html"}, b"<h1>")
    done = project.capc("test", "--refresh", "--settings-from-env")
    assert done.returncode == 1
    assert "status 200 is now 503" in done.stderr
    assert "content type application/json is now text/html" in done.stderr
    assert "the body is no longer JSON" in done.stderr


def test_refresh_write_takes_the_new_recording(project: Project) -> None:
    recorded(project)
    project.server.responder = changed_reply
    done = project.capc("test", "--refresh", "--write", "--settings-from-env")
    assert done.returncode == 0, done.stderr
    assert "capc: rewrote 1 case(s) in capabilities/weather.test.yaml" in done.stderr
    text = (project.root / "capabilities" / "weather.test.yaml").read_text()
    assert "humidity" in text and "${WEATHER_KEY}" in text
    project.stop()
    assert project.capc("test").returncode == 0


def test_write_without_refresh_is_a_usage_error(project: Project) -> None:
    recorded(project)
    done = project.capc("test", "--write")
    assert done.returncode == 2 and "--refresh" in done.stderr
