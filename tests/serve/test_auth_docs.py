"""docs/serve-auth.md, run: its ``capc serve`` command line serves what the page shows.

The command is taken from the page and run as written except for what a test must change
(a loopback bind, a free port, the loopback JWKS instead of the issuer's URL); the 401's
challenge and the metadata document it serves must equal the page's blocks. The host-app
block runs as written against a JWKS file.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import httpx
from starlette.applications import Starlette

from tests.serve.support import JSON_HEADERS, rpc
from tests.support.doc_blocks import code_blocks
from tests.support.oauth import claims, rsa_key, serving_jwks, sign
from tests.support.paths import REPO_ROOT
from tests.support.served_process import free_port, serving

PAGE = REPO_ROOT / "docs" / "serve-auth.md"
KEY = rsa_key("docs-1")


def _block(lang: str) -> str:
    return next(block.text for block in code_blocks(PAGE) if block.lang == lang)


def _replace_value(argv: list[str], flag: str, value: str) -> None:
    argv[argv.index(flag) + 1] = value


def test_the_pages_command_serves_the_pages_challenge_and_metadata(
        tmp_path: Path, weather_manifest: Path):
    (tmp_path / "build").mkdir()
    shutil.copy(weather_manifest, tmp_path / "build" / "manifest.json")
    argv = shlex.split(_block("sh").strip())
    assert argv[:3] == ["capc", "serve", "build/manifest.json"]
    port = free_port()
    public_url = argv[argv.index("--public-url") + 1]
    issuer = argv[argv.index("--auth-issuer") + 1]
    with serving_jwks(KEY) as jwks:
        argv[0] = str(Path(sys.executable).parent / "capc")
        _replace_value(argv, "--host", "127.0.0.1")
        _replace_value(argv, "--port", str(port))
        _replace_value(argv, "--auth-jwks", jwks.url)
        base = f"http://127.0.0.1:{port}"
        with serving(argv, port, cwd=tmp_path, log=tmp_path / "serve.log"):
            refused = httpx.post(base + "/mcp/support", content=rpc("tools/list"),
                                 headers=JSON_HEADERS)
            document = httpx.get(base + "/.well-known/oauth-protected-resource/mcp/support")
            token = sign(KEY, claims(iss=issuer, aud=public_url, scope="tools.support"))
            listed = httpx.post(base + "/mcp/support", content=rpc("tools/list"),
                                headers={**JSON_HEADERS, "authorization": "Bearer " + token})
    shown = re.search(r"^WWW-Authenticate: (.*)$", _block("http"), re.M)
    assert shown is not None
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == shown[1]
    assert document.json() == json.loads(_block("json"))
    assert listed.status_code == 200
    assert sorted(tool["name"] for tool in listed.json()["result"]["tools"]) == \
        ["create_ticket", "get_weather"]


def test_the_host_app_block_builds_an_app(tmp_path: Path, weather_manifest: Path,
                                          monkeypatch):
    (tmp_path / "build").mkdir()
    shutil.copy(weather_manifest, tmp_path / "build" / "manifest.json")
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [KEY.jwk()]}))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(_block("python"), str(PAGE), "exec"), namespace)
    assert isinstance(namespace["app"], Starlette)
    routes = [getattr(route, "path", "") for route in namespace["app"].routes]
    assert "/.well-known/oauth-protected-resource/{rest:path}" in routes
