"""``allowed_networks``: exactly the listed private ranges open, strict or not, on both
sides (the compiler's literal-host check and the runtime transport), and never link-local
or cloud metadata space."""

from __future__ import annotations

import asyncio
import ipaddress
import re
from pathlib import Path

import pytest

from compiler.runtime import RuntimeContext, ToolRegistry, load_manifest
from compiler.runtime.egress.addresses import (
    EgressPolicy,
    NetworkRangeError,
    parse_allowed_networks,
)
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT
from tests.support.runtime import RecordingServer, api_capability, recording_server, write_manifest

API = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
description: Reads the internal inventory.
type: api
options:
  url: {url}
  description: Reads the internal inventory.
"""


def tree(root: Path, urls: dict[str, str], capc_table: str = "") -> Path:
    (root / "capabilities").mkdir(parents=True)
    for code, url in urls.items():
        (root / "capabilities" / f"{code}.yaml").write_text(API.format(code=code, url=url))
    settings = f"[project]\nname = 'adopter'\n\n[tool.capc]\n{capc_table}"
    (root / "pyproject.toml").write_text(settings)
    return root


@pytest.mark.parametrize("text", [
    "169.254.0.0/16", "169.254.169.254/32", "fe80::/10", "0.0.0.0/0", "::/0", "8.8.8.0/24",
    "100.64.0.0/10",  # holds Alibaba's metadata address
    "fd00::/8",  # holds AWS's IPv6 metadata prefix
    "10.20.0.1/16",  # host bits set: say what you mean
    "ten.twenty", "",
])
def test_ranges_that_can_never_be_allowed_are_refused_when_read(text: str) -> None:
    with pytest.raises(NetworkRangeError):
        parse_allowed_networks([text])


def test_an_allowed_range_opens_exactly_itself() -> None:
    policy = EgressPolicy(allowed_networks=parse_allowed_networks(["10.20.0.0/16", "fd12::/16"]))
    assert policy.refusal_for_host("10.20.3.4") is None
    assert policy.refusal_for_host("[fd12::5]") is None
    assert policy.refusal_for_host("[::ffff:10.20.3.4]") is None  # the same address, mapped
    for outside in ("10.21.0.1", "192.168.1.1", "127.0.0.1", "[fd13::1]", "169.254.169.254"):
        refusal = policy.refusal_for_host(outside)
        assert refusal is not None, outside
    # Metadata inside an allowed CGNAT sub-range stays closed even if a caller builds one.
    sneaky = EgressPolicy(allowed_networks=(ipaddress.ip_network("100.100.100.0/24"),))
    assert sneaky.refusal_for_host("100.100.100.200") is not None


def test_strict_compile_accepts_the_allowed_range_and_only_it(tmp_path: Path) -> None:
    root = tree(tmp_path, {"inventory": "http://10.20.1.5/items"},
                'allowed_networks = ["10.20.0.0/16"]\nstrict = true\n')
    done = run_capc("validate", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "no problems found" in done.stderr
    other = tree(tmp_path / "other", {"inventory": "http://10.21.1.5/items"},
                 'allowed_networks = ["10.20.0.0/16"]\nstrict = true\n')
    refused = run_capc("validate", cwd=other)
    assert refused.returncode == 1
    assert "error[url-private-address]" in refused.stderr


def test_the_flag_adds_a_range_and_a_bad_one_is_a_usage_error(tmp_path: Path) -> None:
    root = tree(tmp_path, {"inventory": "http://10.20.1.5/items"})
    assert run_capc("validate", "--strict", cwd=root).returncode == 1
    allowed = run_capc("validate", "--strict", "--allow-network", "10.20.0.0/16", cwd=root)
    assert allowed.returncode == 0, allowed.stderr
    bad = run_capc("validate", "--allow-network", "169.254.0.0/16", cwd=root)
    assert bad.returncode == 2
    assert "--allow-network" in bad.stderr and "Traceback" not in bad.stderr
    (root / "pyproject.toml").write_text('[tool.capc]\nallowed_networks = ["fe80::/10"]\n')
    bad_file = run_capc("validate", cwd=root)
    assert bad_file.returncode == 2
    assert "allowed_networks" in bad_file.stderr and "Traceback" not in bad_file.stderr


def test_the_private_network_warning_never_calls_a_failing_address_allowed(
        tmp_path: Path) -> None:
    root = tree(tmp_path, {"inventory": "http://10.20.1.5/items"})
    done = run_capc("validate", "--strict", "--allow-private-networks", cwd=root)
    assert done.returncode == 1
    assert "allowed by" not in done.stderr
    assert "allowed_networks" in done.stderr  # says how to allow it under --strict


def _manifest(tmp_path: Path, server: RecordingServer) -> Path:
    capability = api_capability("echo", server.base_url + "/echo", properties={}, arguments={})
    return write_manifest(tmp_path / "manifest.json", [capability])


async def _call(manifest_path: Path, **options: object) -> str:
    manifest = load_manifest(manifest_path, registry=ToolRegistry(), **options)
    try:
        toolset = await manifest.resolve(["echo"], RuntimeContext(user_id=1))
        return str(await toolset.tools[0].ainvoke({}))
    finally:
        await manifest.aclose()


def test_the_runtime_opens_the_same_ranges(tmp_path: Path) -> None:
    with recording_server() as server:
        path = _manifest(tmp_path, server)
        refused = asyncio.run(_call(path))
        assert server.received == []
        assert "loopback" in refused
        outside = asyncio.run(_call(path, allowed_networks=["10.0.0.0/8"]))
        assert server.received == [] and "loopback" in outside
        allowed = asyncio.run(_call(path, allowed_networks=["127.0.0.0/8"]))
        assert allowed == '{"ok": true}'
        assert [request.path for request in server.received] == ["/echo"]
    with pytest.raises(ValueError, match=r"never allowed|link-local"):
        load_manifest(path, registry=ToolRegistry(), allowed_networks=["169.254.169.254/32"])


def test_docs_agents_md_shows_both_keywords_and_its_call_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (REPO_ROOT / "docs" / "agents.md").read_text()
    assert "load_manifest(..., allow_private_networks=True)" in page
    call = re.search(r"`(load_manifest\(\"build/manifest\.json\", allowed_networks=[^`]+\))`",
                     page)
    assert call is not None
    (tmp_path / "build").mkdir()
    write_manifest(tmp_path / "build" / "manifest.json", [])
    monkeypatch.chdir(tmp_path)
    # As written, with an empty registry instead of plugin discovery.
    written = call.group(1).replace("load_manifest(", "load_manifest(registry=ToolRegistry(), "
                                    "path=")
    manifest = eval(written, {"load_manifest": load_manifest, "ToolRegistry": ToolRegistry})
    assert manifest.digest.startswith("sha256:")
