"""Property tests of request building: whatever an argument holds, it stays in its slot and
never reaches a setting."""

from __future__ import annotations

import json
from types import MappingProxyType
from urllib.parse import parse_qsl, unquote, urlsplit

from hypothesis import given
from hypothesis import strategies as st

from compiler.runtime.api.request import build_request, resolve_endpoint
from compiler.runtime.manifest.read import ApiEndpoint, ArgumentBinding

SECRET = "the-secret-value"
TEXT = st.text(min_size=1, max_size=40).filter(lambda value: value not in (".", ".."))


def endpoint(url: str, template: object = None, headers: dict[str, str] | None = None,
             **bindings: tuple[str, ...]) -> ApiEndpoint:
    return ApiEndpoint(
        method="POST", url=url, headers=MappingProxyType(headers or {}),
        body_template=template, timeout=5.0, max_response_bytes=1000,
        arguments=MappingProxyType({
            name: ArgumentBinding(name, kinds, "string") for name, kinds in bindings.items()}),
        placeholders=("KEY",),
    )


@given(value=TEXT, query=st.text(max_size=40))
def test_path_and_query_values_round_trip_and_stay_in_place(value: str, query: str) -> None:
    resolved = resolve_endpoint(
        endpoint("https://api.example.com/v1/${KEY}/items/{item}?fixed=1", item=("path",),
                 q=("query",)),
        {"KEY": SECRET},
    )
    request = build_request(resolved, {"item": value, "q": query})
    parts = urlsplit(request.url)
    assert parts.netloc == "api.example.com"
    segments = parts.path.split("/")
    assert segments[:4] == ["", "v1", SECRET, "items"] and len(segments) == 5
    assert unquote(segments[4]) == value
    assert parse_qsl(parts.query, keep_blank_values=True) == [("fixed", "1"), ("q", query)]


@given(value=st.text(max_size=60))
def test_json_template_strings_carry_arguments_verbatim(value: str) -> None:
    resolved = resolve_endpoint(
        endpoint("https://api.example.com/x",
                 template=MappingProxyType({"key": "${KEY}", "text": "say: {text}",
                                            "raw": "{text}"}),
                 text=("template",)),
        {"KEY": SECRET},
    )
    body = json.loads(build_request(resolved, {"text": value}).content or b"")
    assert body == {"key": SECRET, "text": "say: " + value, "raw": value}


@given(value=st.text(max_size=60))
def test_raw_json_template_escapes_arguments(value: str) -> None:
    resolved = resolve_endpoint(
        endpoint("https://api.example.com/x", template='{"text": "{text}", "k": "${KEY}"}',
                 headers={"Content-Type": "application/json; charset=utf-8"},
                 text=("template",)),
        {"KEY": SECRET},
    )
    body = json.loads(build_request(resolved, {"text": value}).content or b"")
    assert body == {"text": value, "k": SECRET}


@given(value=st.text(max_size=60))
def test_form_template_encodes_arguments(value: str) -> None:
    resolved = resolve_endpoint(
        endpoint("https://api.example.com/x", template="To={to}&Key=${KEY}",
                 headers={"Content-Type": "application/x-www-form-urlencoded"},
                 to=("template",)),
        {"KEY": SECRET},
    )
    content = (build_request(resolved, {"to": value}).content or b"").decode()
    assert parse_qsl(content, keep_blank_values=True) == [("To", value), ("Key", SECRET)]


@given(value=st.from_regex(r"[^\x00]*\$\{KEY\}[^\x00]*", fullmatch=True))
def test_an_argument_naming_a_setting_never_receives_its_value(value: str) -> None:
    resolved = resolve_endpoint(
        endpoint("https://api.example.com/{item}", template="{note}",
                 item=("path",), note=("template",)),
        {"KEY": SECRET},
    )
    request = build_request(resolved, {"item": value, "note": value})
    assert SECRET not in request.url
    assert SECRET.encode() not in (request.content or b"")
