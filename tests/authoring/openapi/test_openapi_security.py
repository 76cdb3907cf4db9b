"""Security schemes and credential-like headers become settings, never arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.authoring.openapi.helpers import document, get, mapped, write


def with_scheme(scheme: dict[str, Any], **operation: Any) -> dict[str, Any]:
    return document({"/a": {"get": get("op", **operation)}}, security=[{"auth": []}],
                    components={"securitySchemes": {"auth": scheme}})


@pytest.mark.parametrize(("scheme", "headers", "url_end"), [
    ({"type": "http", "scheme": "bearer"}, {"Authorization": "Bearer ${TEST_API_AUTH}"}, "/a"),
    ({"type": "http", "scheme": "basic"}, {"Authorization": "Basic ${TEST_API_AUTH}"}, "/a"),
    ({"type": "oauth2", "flows": {}}, {"Authorization": "Bearer ${TEST_API_AUTH}"}, "/a"),
    ({"type": "apiKey", "in": "header", "name": "X-Key"}, {"X-Key": "${TEST_API_AUTH}"}, "/a"),
    ({"type": "apiKey", "in": "cookie", "name": "sid"}, {"Cookie": "sid=${TEST_API_AUTH}"},
     "/a"),
    ({"type": "apiKey", "in": "query", "name": "key"}, None, "/a?key=${TEST_API_AUTH}"),
])
def test_schemes_become_placeholders(tmp_path: Path, scheme: dict[str, Any],
                                     headers: dict[str, str] | None, url_end: str) -> None:
    made = mapped(write(tmp_path, with_scheme(scheme)))["op"]
    options = made["data"]["options"]
    assert options.get("headers") == headers
    assert options["url"].endswith(url_end)
    assert [s.name for s in made["settings"]] == ["TEST_API_AUTH"]
    assert "params" not in options


def test_operation_security_overrides_and_empty_means_anonymous(tmp_path: Path) -> None:
    data = with_scheme({"type": "http", "scheme": "bearer"}, security=[])
    assert "headers" not in mapped(write(tmp_path, data))["op"]["data"]["options"]
    optional = with_scheme({"type": "http", "scheme": "bearer"}, security=[{}, {"auth": []}])
    assert mapped(write(tmp_path, optional, "b.yaml"))["op"]["data"]["options"]["headers"] == \
        {"Authorization": "Bearer ${TEST_API_AUTH}"}


@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key", "Cookie", "X-Auth-Token",
                                    "Private-Token", "X-Client-Secret"])
def test_header_parameters_named_like_credentials_are_settings(tmp_path: Path,
                                                               header: str) -> None:
    data = document({"/a": {"get": get("op", parameters=[
        {"name": header, "in": "header", "required": True, "schema": {"type": "string"}}])}})
    made = mapped(write(tmp_path, data))["op"]
    options = made["data"]["options"]
    assert list(options["headers"]) == [header]
    assert options["headers"][header].startswith("${TEST_API_")
    assert "params" not in options and "body" not in options
