"""docs/fleet.md, run top to bottom: a real key, a real signed compile, the manifest
published into a directory laid out as the kubelet lays out a ConfigMap volume, and the
page's Deployment checked against the path its Python reads."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from tests.runtime.fleet.support import MANIFEST, ConfigMapVolume
from tests.support.doc_blocks import code_blocks, run_blocks
from tests.support.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "fleet.md"


async def test_the_fleet_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    volume = ConfigMapVolume(tmp_path / "etc-capc")
    volume.root.mkdir()
    monkeypatch.setenv("CAPC_MANIFEST", str(volume.manifest))
    keys: list[str] = []

    def after_shell(command: str, output: str) -> None:
        if command.startswith("capc keygen"):
            keys.extend(re.findall(r"ed25519:\S+", output))
            monkeypatch.setenv("CAPC_TRUSTED_KEY", keys[0])
        if command.startswith("capc compile"):
            # What `kubectl apply` and the kubelet do: both files, one swap.
            build = tmp_path / "build"
            volume.publish({MANIFEST: (build / MANIFEST).read_bytes(),
                            f"{MANIFEST}.sig": (build / f"{MANIFEST}.sig").read_bytes()})

    printed = await run_blocks(PAGE, tmp_path, {}, after_shell=after_shell)
    mode = "events" if _watchfiles_installed() else "polling"
    assert len(keys) == 1
    # What the shell steps print (the key, the files compile wrote) is not the Python's.
    python_lines = [line for line in printed.splitlines()
                    if not line.startswith(("ed25519:", "capc: wrote "))]
    assert python_lines == [
        f"0 {mode}",
        "['get_weather']",
        "True 0 None",
        "get_weather api support-bot True",
    ]


def test_the_deployment_mounts_the_directory_the_agent_reads(tmp_path: Path) -> None:
    blocks = code_blocks(PAGE)
    deployment = yaml.safe_load(next(b.text for b in blocks if b.text.startswith(
        "# deploy/agent.yaml")))
    kubectl = next(b.text for b in blocks if b.text.startswith("kubectl create configmap"))
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {item["name"]: item for item in container["env"]}
    manifest_path = env["CAPC_MANIFEST"]["value"]
    (mount,) = container["volumeMounts"]
    (volume,) = pod["volumes"]
    assert mount["name"] == volume["name"] and mount["readOnly"] is True
    # A subPath mount never sees a ConfigMap update: the directory must be mounted.
    assert "subPath" not in mount
    assert os.path.dirname(manifest_path) == mount["mountPath"]
    assert re.search(rf"create configmap {volume['configMap']['name']} ", kubectl)
    for name in ("manifest.json", "manifest.json.sig"):
        assert f"--from-file=build/{name}" in kubectl
    assert "CAPC_TRUSTED_KEY" in env


def _watchfiles_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("watchfiles") is not None
