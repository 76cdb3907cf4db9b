"""Issue 19 item 10: a FIFO or device given as a manifest, signature or key is refused at
once, never read until it ends (a FIFO with no writer blocks an ordinary open forever).

Each case runs in a child process so that a regression shows as that child's failure
(killed by its generous time limit), not as a hung suite; the assertions are on what was
said and the exit code, never on how long it took.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.runtime.manifest.files import FileTooLarge, UnreadableFile, read_regular_file
from tests.support.capc import run_capc, run_capc_process
from tests.support.paths import REPO_ROOT
from tests.support.redteam import api_capability

HANG_GUARD = 120  # seconds: only a hang ever reaches it
KEY = "ed25519:" + "A" * 43 + "="


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "a.yaml").write_text(api_capability())
    assert run_capc("compile", "-o", "m.json", cwd=tmp_path).returncode == 0
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


def test_the_reader_refuses_a_fifo_and_a_device_and_bounds_a_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", Path("/dev/zero")):
        with pytest.raises(UnreadableFile, match="not a regular file"):
            read_regular_file(path, 10)
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(FileTooLarge):
        read_regular_file(tmp_path / "big", 10)
    assert read_regular_file(tmp_path / "big", 11) == b"x" * 11


@pytest.mark.parametrize(("arguments", "code", "said"), [
    (["verify", "m.json", "--public-key", KEY, "--sig", "fifo"], 1, "not a regular file"),
    (["verify", "fifo", "--public-key", KEY], 2, "not a regular file"),
    (["verify", "/dev/zero", "--public-key", KEY], 2, "not a regular file"),
    (["verify", "m.json", "--public-key", "fifo"], 2, "not a regular file"),
    (["docs", "-m", "fifo"], 2, "not a regular file"),
    (["explain", "tool_a", "-m", "/dev/zero"], 2, "not a regular file"),
    (["diff", "m.json", "fifo"], 2, "not a regular file"),
    (["compile", "-o", "x.json", "--sign-key", "fifo"], 2, "not a regular file"),
])
def test_capc_refuses_a_fifo_or_device_at_once(
        project: Path, arguments: list[str], code: int, said: str) -> None:
    done = run_capc_process(*arguments, cwd=project, timeout=HANG_GUARD)
    assert done.returncode == code, done.stderr
    assert said in done.stderr


def test_load_manifest_with_trusted_keys_refuses_a_fifo_signature(project: Path) -> None:
    program = ("from compiler.runtime import load_manifest, ManifestError\n"
               "from compiler.runtime.tools.registry import ToolRegistry\n"
               "try:\n"
               f"    load_manifest('m.json', ToolRegistry(), trusted_keys=[{KEY!r}],\n"
               "                  signature_path='fifo')\n"
               "except ManifestError as refused:\n"
               "    print(refused)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=project, capture_output=True,
                          text=True, timeout=HANG_GUARD,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stderr
    assert "manifest refused (signature)" in done.stdout
    assert "not a regular file" in done.stdout


def test_a_directory_as_manifest_or_signature_is_a_clear_manifest_error(tmp_path: Path) -> None:
    from compiler.runtime import ManifestError, ToolRegistry, load_manifest
    from tests.support.runtime import mcp_capability, write_manifest
    from tests.support.signing import new_key

    folder = tmp_path / "manifest.json"
    folder.mkdir()
    with pytest.raises(ManifestError) as refused:
        load_manifest(folder, registry=ToolRegistry())
    assert refused.value.check == "read" and "a directory" in str(refused.value)
    assert "Errno" not in str(refused.value) and ": 3" not in str(refused.value)
    manifest = write_manifest(tmp_path / "m.json", [mcp_capability("deepwiki")])
    (tmp_path / "m.json.sig").mkdir()
    with pytest.raises(ManifestError) as unsigned:
        load_manifest(manifest, registry=ToolRegistry(), trusted_keys=[new_key().public_text])
    assert unsigned.value.check == "signature"
    assert "m.json.sig: a directory" in str(unsigned.value) and "Errno" not in str(
        unsigned.value)
    verified = run_capc("verify", str(manifest), "--public-key", new_key().public_text,
                        cwd=tmp_path)
    assert verified.returncode == 1 and "a directory" in verified.stderr
    assert "Traceback" not in verified.stderr
