"""``capc serve``'s refusals before anything listens: a refused or unreadable manifest, an
unsigned one when keys are given, a bind beyond loopback without authentication."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.cli.serving import is_loopback
from compiler.runtime import ToolRegistry
from compiler.runtime.errors import ManifestError
from compiler.runtime.serve import create_app
from tests.serve.support import post, rpc, running
from tests.support.capc import run_capc
from tests.support.signing import new_key, sign_file


def test_a_tampered_manifest_never_serves(weather_manifest: Path, tmp_path: Path) -> None:
    document = json.loads(weather_manifest.read_text())
    document["profiles"][0]["capabilities"].append("admin_reset")
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    done = run_capc("serve", str(tampered), "--port", "0")
    assert done.returncode == 1
    assert "manifest refused (digest)" in done.stderr and "Traceback" not in done.stderr


def test_a_missing_manifest_is_an_io_error(tmp_path: Path) -> None:
    done = run_capc("serve", str(tmp_path / "nowhere.json"), "--port", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_an_unsigned_manifest_is_refused_when_keys_are_given(weather_manifest: Path) -> None:
    key = new_key()
    done = run_capc("serve", str(weather_manifest), "--public-key", key.public_text,
                    "--port", "0")
    assert done.returncode == 1 and "signature" in done.stderr


def test_a_signed_manifest_is_served_and_a_wrong_digest_is_not(weather_manifest: Path) -> None:
    key = new_key()
    sign_file(weather_manifest, key)
    app = create_app(weather_manifest, public_keys=[key.public_text],
                     registry=ToolRegistry(), allow_private_networks=True)
    with running(app) as server:
        assert post(server.url("/mcp/support"), rpc("ping")).status_code == 200
    with pytest.raises(ManifestError, match="signature"):
        create_app(weather_manifest, public_keys=[new_key().public_text],
                   registry=ToolRegistry())
    with pytest.raises(ManifestError):
        create_app(weather_manifest, expected_digest="sha256:" + "0" * 64,
                   registry=ToolRegistry())


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "example.com"])
def test_beyond_loopback_without_auth_is_refused(weather_manifest: Path, host: str) -> None:
    done = run_capc("serve", str(weather_manifest), "--host", host, "--port", "0")
    assert done.returncode == 2 and "without authentication" in done.stderr


def test_loopback_names() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "::1", "[::1]", "localhost",
                                              "127.8.9.10"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "192.168.1.1", "host"))


def test_an_unknown_profile_is_a_usage_error(weather_manifest: Path) -> None:
    done = run_capc("serve", str(weather_manifest), "--profile", "nobody", "--port", "0")
    assert done.returncode == 2 and "no profile 'nobody'" in done.stderr
