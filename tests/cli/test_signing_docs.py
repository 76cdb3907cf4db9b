"""The signing blocks of docs/ci.md and docs/manifest.md, run as a user would copy them.

Shell blocks run under bash with the venv's ``capc`` on PATH (``gh`` is a stand-in that
records what it was given); the CI job's steps run one by one with their ``env`` and the
``${{ secrets.* }}`` / ``${{ vars.* }}`` values filled in; Python blocks run in a fresh
interpreter.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT
from tests.support.runtime import seal
from tests.support.signing import new_key, sign_file

CI_PAGE = (REPO_ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
MANIFEST_PAGE = (REPO_ROOT / "docs" / "manifest.md").read_text(encoding="utf-8")
VENV_BIN = Path(sys.executable).parent
FAKE_GH = """#!/bin/sh
# Records `gh secret set NAME` (value on stdin) and `gh variable set NAME --body VALUE`.
case "$1 $2" in
  "secret set") cat > "$GH_RECORD/secret-$3" ;;
  "variable set") printf '%s' "$5" > "$GH_RECORD/variable-$3" ;;
  *) echo "unexpected gh $*" >&2; exit 1 ;;
esac
"""


def fenced_block(page: str, name: str) -> str:
    """The fenced block right after ``<!-- docs-test: NAME -->``."""
    start = page.index(f"<!-- docs-test: {name} -->")
    fence = page.index("```", start)
    body = page[page.index("\n", fence) + 1:]
    return body[: body.index("```")]


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", **env}
    environment.pop("CAPC_SIGNING_KEY", None)
    environment.update(env)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=180)


def run_keygen_block(folder: Path) -> tuple[str, str]:
    """Run the one-time setup block: (the secret's PEM text, the published public key)."""
    tools = folder / "tools"
    record = folder / "gh-record"
    tools.mkdir(parents=True)
    record.mkdir()
    (tools / "gh").write_text(FAKE_GH)
    (tools / "gh").chmod(0o755)
    result = bash(fenced_block(CI_PAGE, "keygen"), folder, {
        "PATH": f"{tools}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "GH_RECORD": str(record)})
    assert result.returncode == 0, result.stderr
    assert not (folder / "capc-signing.pem").exists()  # the block deletes the local copy
    return ((record / "secret-CAPC_SIGNING_KEY").read_text(),
            (record / "variable-CAPC_PUBLIC_KEY").read_text())


def checkout(folder: Path) -> Path:
    """A working copy: the example tree and the venv, as the job's first steps leave it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO_ROOT / "capabilities", folder / "capabilities")
    (folder / ".venv").symlink_to(VENV_BIN.parent)
    return folder


def expression(text: str, secrets: dict[str, str], variables: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        scope, name = match.group(1), match.group(2)
        return (secrets if scope == "secrets" else variables)[name]

    return re.sub(r"\$\{\{\s*(secrets|vars)\.(\w+)\s*\}\}", value, text)


def run_sign_job(folder: Path, secrets: dict[str, str], variables: dict[str, str]
                 ) -> list[subprocess.CompletedProcess[str]]:
    job = yaml.safe_load(fenced_block(CI_PAGE, "sign-job"))["sign"]
    assert "CAPC_SIGNING_KEY" not in json.dumps(job.get("env", {}))  # step-scoped only
    results = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        if "pip install" in step["run"]:
            assert "capc[sign,budget]" in step["run"]  # signing, and compiling budgets
            continue  # no index in tests: this run's venv, on PATH, has capc installed
        env = {name: expression(str(value), secrets, variables)
               for name, value in (step.get("env") or {}).items()}
        results.append(bash(expression(step["run"], secrets, variables), folder, env))
        if results[-1].returncode != 0:
            break
    upload = next(step for step in job["steps"]
                  if step.get("uses", "").startswith("actions/upload-artifact"))
    for path in upload["with"]["path"].split():
        assert (folder / path).is_file(), path
    return results


def test_the_ci_setup_and_sign_job_sign_and_verify(tmp_path: Path) -> None:
    secret, public_key = run_keygen_block(tmp_path / "setup")
    assert secret.startswith("-----BEGIN PRIVATE KEY-----")
    assert re.fullmatch(r"ed25519:[A-Za-z0-9+/]{43}=", public_key)
    work = checkout(tmp_path / "runner")
    results = run_sign_job(work, {"CAPC_SIGNING_KEY": secret}, {"CAPC_PUBLIC_KEY": public_key})
    for result in results:
        assert result.returncode == 0, result.stderr
        for line in secret.splitlines()[1:-1]:
            assert line not in result.stdout + result.stderr
    signature = json.loads((work / "build" / "manifest.json.sig").read_text())
    assert signature["public_key"] == public_key
    assert "verified" in results[-1].stdout


def test_the_sign_job_fails_when_the_published_key_is_another(tmp_path: Path) -> None:
    secret, _ = run_keygen_block(tmp_path / "setup")
    work = checkout(tmp_path / "runner")
    results = run_sign_job(work, {"CAPC_SIGNING_KEY": secret},
                           {"CAPC_PUBLIC_KEY": new_key().public_text})
    assert results[-1].returncode == 1 and "[untrusted-key]" in results[-1].stderr


def boot(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = folder / "boot.py"
    script.write_text(fenced_block(CI_PAGE, "boot") + "\nprint(manifest.digest)\n")
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    environment.pop("CAPC_MANIFEST_DIGEST", None)
    environment.update(env)
    return subprocess.run([sys.executable, str(script)], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=180)


def test_the_boot_block_loads_only_what_the_trusted_key_signed(tmp_path: Path) -> None:
    secret, public_key = run_keygen_block(tmp_path / "setup")
    work = checkout(tmp_path / "runner")
    run_sign_job(work, {"CAPC_SIGNING_KEY": secret}, {"CAPC_PUBLIC_KEY": public_key})
    manifest = work / "build" / "manifest.json"
    digest = json.loads(manifest.read_text())["digest"]
    loaded = boot(work, {"CAPC_PUBLIC_KEY": public_key})
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == digest
    pinned = boot(work, {"CAPC_PUBLIC_KEY": public_key, "CAPC_MANIFEST_DIGEST": digest})
    assert pinned.returncode == 0, pinned.stderr
    stranger = boot(work, {"CAPC_PUBLIC_KEY": new_key().public_text})
    assert stranger.returncode != 0 and "manifest refused (signature)" in stranger.stderr
    other = boot(work, {"CAPC_PUBLIC_KEY": public_key,
                        "CAPC_MANIFEST_DIGEST": "sha256:" + "1" * 64})
    assert other.returncode != 0 and "manifest refused (digest)" in other.stderr
    document = json.loads(manifest.read_text())
    document["capabilities"][0]["name"] = "Edited after signing"
    manifest.write_text(json.dumps(seal(document), indent=2, sort_keys=True) + "\n")
    edited = boot(work, {"CAPC_PUBLIC_KEY": public_key})
    assert edited.returncode != 0 and "[other-manifest]" in edited.stderr


def independent_verifier() -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(fenced_block(MANIFEST_PAGE, "independent-verifier"), "manifest.md", "exec"),
         namespace)
    return namespace["verify_capc_manifest"]


def test_the_independent_verifier_agrees_with_capc(tmp_path: Path) -> None:
    verify = independent_verifier()
    key_file = tmp_path / "k.pem"
    public_key = run_capc("keygen", "-o", str(key_file), cwd=tmp_path).stdout.strip()
    work = checkout(tmp_path / "tree")
    compiled = run_capc("compile", "capabilities", "-o", "m.json", "--sign-key", str(key_file),
                        cwd=work)
    assert compiled.returncode == 0, compiled.stderr
    manifest, signature = work / "m.json", work / "m.json.sig"
    assert verify(manifest, signature, [public_key]) == json.loads(manifest.read_text())["digest"]
    with pytest.raises(ValueError, match="untrusted-key"):
        verify(manifest, signature, [new_key().public_text])
    document = json.loads(signature.read_text())
    document["signature"] = base64.b64encode(bytes(64)).decode()
    signature.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="signature-invalid"):
        verify(manifest, signature, [public_key])
    edited = json.loads(manifest.read_text())
    edited["capabilities"][0]["name"] = "Édité"  # non-ASCII: the canonical form's UTF-8
    manifest.write_text(json.dumps(seal(edited), indent=2, sort_keys=True,
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    sign_file(manifest, other := new_key())
    assert verify(manifest, signature, [other.public_text]) == json.loads(
        manifest.read_text(encoding="utf-8"))["digest"]
    with pytest.raises(ValueError, match="untrusted-key"):
        verify(manifest, signature, [public_key])


def test_the_test_vector_is_what_capc_signs() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from compiler.runtime.manifest.signature import PublicKey, parse_signed_at, signed_message
    from compiler.signing import SigningKey

    table = dict(re.findall(r"^\| ([a-z ()]+?) \| `([^`]+)`", MANIFEST_PAGE, re.MULTILINE))
    private = Ed25519PrivateKey.from_private_bytes(
        bytes.fromhex(table["private key seed (hex)"]))
    raw = base64.b64decode(table["public key"].removeprefix("ed25519:"))
    key = SigningKey("test vector", PublicKey(raw), private)
    digest, signed_at = table["digest"], table["signed at"]
    assert digest == "sha256:" + hashlib.sha256(b"").hexdigest()
    moment = parse_signed_at(signed_at)
    assert moment is not None
    message = signed_message(digest, moment)
    assert message.hex() == (table["signed bytes (hex)"] + digest.encode().hex() + "0a"
                             + signed_at.encode().hex())
    assert len(message) == 126
    signature = key.sign(digest, moment)
    assert base64.b64encode(signature.signature).decode() == table["signature"]
    assert json.loads(signature.to_bytes())["signed_at"] == signed_at
    private.public_key().verify(signature.signature, message)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_the_openssl_public_key_is_accepted(tmp_path: Path) -> None:
    work = checkout(tmp_path / "tree")
    keygen = bash("capc keygen -o capc-signing.pem", work, {})
    assert keygen.returncode == 0, keygen.stderr
    assert stat.S_IMODE((work / "capc-signing.pem").stat().st_mode) == 0o600
    result = bash(fenced_block(MANIFEST_PAGE, "openssl-public-key"), work, {})
    assert result.returncode == 0, result.stderr
    compiled = bash("capc compile capabilities -o m.json --sign-key capc-signing.pem", work, {})
    assert compiled.returncode == 0, compiled.stderr
    verified = bash("capc verify m.json --public-key capc-signing.pub.pem", work, {})
    assert verified.returncode == 0, verified.stderr
    assert keygen.stdout.strip() in verified.stdout
