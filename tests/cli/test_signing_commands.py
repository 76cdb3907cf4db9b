"""``capc keygen``, ``capc compile --sign-key`` / ``$CAPC_SIGNING_KEY`` and ``capc verify``
through a real subprocess: exit codes, messages, and no key material in any output."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.runtime import ToolRegistry, load_manifest
from tests.support.capc import run_capc
from tests.support.runtime import seal
from tests.support.signing import new_key, sign_file

CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: deepwiki
name: DeepWiki
type: mcp
options:
  server_label: deepwiki
  server_url: {url}
  require_approval: never
"""


# The test process's own environment, without a signing key the runner might carry.
CLEAN_ENV = {key: value for key, value in os.environ.items() if key != "CAPC_SIGNING_KEY"}


def capc(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return run_capc(*args, cwd=cwd, env=CLEAN_ENV, extra_env=env)


def tree(folder: Path, url: str = "https://mcp.deepwiki.com/mcp") -> Path:
    (folder / "capabilities").mkdir(parents=True, exist_ok=True)
    (folder / "capabilities" / "deepwiki.yaml").write_text(CAPABILITY.format(url=url))
    return folder


def keygen(folder: Path, name: str = "signing.pem") -> tuple[Path, str]:
    result = capc("keygen", "-o", name, cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / name, result.stdout.strip()


def signed_tree(folder: Path) -> tuple[Path, str]:
    """A compiled, signed tree: (manifest path, public key)."""
    key_file, public_key = keygen(tree(folder))
    result = capc("compile", "-o", "build/m.json", "--sign-key", str(key_file), cwd=folder,
                  env={"CAPC_NO_CACHE": "1"})
    assert result.returncode == 0, result.stderr
    return folder / "build" / "m.json", public_key


def assert_no_key_material(key_file: Path, *outputs: str) -> None:
    body = [line for line in key_file.read_text().splitlines() if "-----" not in line]
    for output in outputs:
        assert "PRIVATE KEY" not in output
        for line in body:
            assert line not in output
        assert "Traceback" not in output


# keygen ---------------------------------------------------------------------------------

def test_keygen_writes_a_0600_pkcs8_key_and_prints_its_public_key(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key_file, public_key = keygen(tmp_path)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    pem = key_file.read_bytes()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----\n")  # PKCS8
    private = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(private, Ed25519PrivateKey)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
    import base64
    assert public_key == "ed25519:" + base64.b64encode(raw).decode()
    assert_no_key_material(key_file, public_key)


def test_keygen_under_a_permissive_umask_still_writes_0600(tmp_path: Path) -> None:
    code = ("import os, sys; os.umask(0); from compiler.cli import main; "
            "sys.argv = ['capc', 'keygen', '-o', 'k.pem']; main()")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((tmp_path / "k.pem").stat().st_mode) == 0o600


def test_keygen_never_overwrites(tmp_path: Path) -> None:
    key_file, _ = keygen(tmp_path)
    before = key_file.read_bytes()
    result = capc("keygen", "-o", str(key_file), cwd=tmp_path)
    assert result.returncode == 2
    assert "already exists" in result.stderr and "never overwrites" in result.stderr
    assert result.stdout == "" and key_file.read_bytes() == before
    assert_no_key_material(key_file, result.stderr)


def test_keygen_does_not_follow_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.pem"
    (tmp_path / "link.pem").symlink_to(target)
    result = capc("keygen", "-o", "link.pem", cwd=tmp_path)
    assert result.returncode == 2 and "already exists" in result.stderr
    assert not target.exists()


# compile --sign-key ---------------------------------------------------------------------

def test_compile_signs_the_manifest_it_writes(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path)
    signature = json.loads((tmp_path / "build" / "m.json.sig").read_text())
    assert set(signature) == {"algorithm", "public_key", "digest", "signature", "signed_at"}
    assert re.fullmatch(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z",
                        signature["signed_at"])
    assert signature["algorithm"] == "ed25519" and signature["public_key"] == public_key
    assert signature["digest"] == json.loads(manifest.read_text())["digest"]
    assert load_manifest(manifest, registry=ToolRegistry(), trusted_keys=[public_key])


def test_the_signing_key_can_come_from_the_environment(tmp_path: Path) -> None:
    key_file, public_key = keygen(tree(tmp_path))
    result = capc("compile", "-o", "build/m.json", cwd=tmp_path,
                  env={"CAPC_SIGNING_KEY": key_file.read_text()})
    assert result.returncode == 0, result.stderr
    assert_no_key_material(key_file, result.stdout, result.stderr)
    verified = capc("verify", "build/m.json", "--public-key", public_key, cwd=tmp_path)
    assert verified.returncode == 0, verified.stderr


def test_no_key_no_signature(tmp_path: Path) -> None:
    result = capc("compile", "-o", "build/m.json", cwd=tree(tmp_path),
                  env={"CAPC_SIGNING_KEY": ""})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "build" / "m.json").exists()
    assert not (tmp_path / "build" / "m.json.sig").exists()


@pytest.mark.parametrize("content", [
    b"garbage", b"-----BEGIN PRIVATE KEY-----\nAAAAsecretmaterial\n-----END PRIVATE KEY-----\n",
    b"", "rsa", "encrypted"])
def test_a_bad_key_is_a_usage_error_before_anything_is_written(
    tmp_path: Path, content: bytes | str
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if content == "rsa":
        content = rsa.generate_private_key(65537, 2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())
    elif content == "encrypted":
        content = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pass"))
    assert isinstance(content, bytes)
    key_file = tree(tmp_path) / "bad.pem"
    key_file.write_bytes(content)
    for env, flags in (({}, ["--sign-key", "bad.pem"]),
                       ({"CAPC_SIGNING_KEY": content.decode() or " x"}, [])):
        result = capc("compile", "-o", "build/m.json", *flags, cwd=tmp_path, env=env)
        assert result.returncode == 2, result.stderr
        source = "bad.pem" if flags else "$CAPC_SIGNING_KEY"
        assert f"capc: {source} is not an unencrypted PEM Ed25519 private key" in result.stderr
        assert_no_key_material(key_file, result.stdout, result.stderr)
        assert not (tmp_path / "build").exists()


def test_a_missing_key_file_is_a_usage_error(tmp_path: Path) -> None:
    result = capc("compile", "-o", "build/m.json", "--sign-key", "nope.pem", cwd=tree(tmp_path))
    assert result.returncode == 2
    assert "nope.pem: cannot read the signing key" in result.stderr
    assert not (tmp_path / "build").exists()


def test_check_with_a_key_fails_without_a_valid_signature(tmp_path: Path) -> None:
    manifest, _ = signed_tree(tmp_path)
    signature = manifest.with_name("m.json.sig")
    check = ("compile", "-o", "build/m.json", "--check", "--sign-key", "signing.pem")
    assert capc(*check, cwd=tmp_path).returncode == 0
    assert capc("compile", "-o", "build/m.json", "--check", cwd=tmp_path).returncode == 0
    other_key, _ = keygen(tmp_path, "other.pem")
    result = capc("compile", "-o", "build/m.json", "--check", "--sign-key", str(other_key),
                  cwd=tmp_path)
    assert result.returncode == 1
    assert "error[stale-signature]" in result.stderr and "[untrusted-key]" in result.stderr
    saved = signature.read_bytes()
    signature.unlink()
    result = capc(*check, cwd=tmp_path)
    assert result.returncode == 1 and "[signature-missing]" in result.stderr
    document = json.loads(saved)
    document["signature"] = document["signature"][:-4] + "AAA="
    signature.write_text(json.dumps(document))
    result = capc(*check, cwd=tmp_path)
    assert result.returncode == 1 and "[signature-" in result.stderr
    # A recompile re-signs, and the check passes again.
    assert capc("compile", "-o", "build/m.json", "--sign-key", "signing.pem",
                cwd=tmp_path).returncode == 0
    assert capc(*check, cwd=tmp_path).returncode == 0


def test_check_with_a_key_fails_for_a_signature_of_an_older_manifest(tmp_path: Path) -> None:
    manifest, _ = signed_tree(tmp_path)
    old_signature = manifest.with_name("m.json.sig").read_bytes()
    tree(tmp_path, url="https://mcp.example.com/mcp")
    assert capc("compile", "-o", "build/m.json", "--sign-key", "signing.pem",
                cwd=tmp_path).returncode == 0
    manifest.with_name("m.json.sig").write_bytes(old_signature)
    result = capc("compile", "-o", "build/m.json", "--check", "--sign-key", "signing.pem",
                  cwd=tmp_path)
    assert result.returncode == 1 and "[other-manifest]" in result.stderr


# verify ---------------------------------------------------------------------------------

def test_verify_accepts_a_manifest_signed_by_a_trusted_key(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path)
    _, stranger = keygen(tmp_path, "stranger.pem")
    result = capc("verify", str(manifest), "--public-key", stranger, "--public-key", public_key,
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "verified" in result.stdout and public_key in result.stdout


def test_verify_takes_a_pem_public_key_file(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization

    manifest, _ = signed_tree(tmp_path)
    private = serialization.load_pem_private_key((tmp_path / "signing.pem").read_bytes(), None)
    (tmp_path / "signing.pub").write_bytes(private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    result = capc("verify", str(manifest), "--public-key", "signing.pub", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_verify_refuses_another_key(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path)
    _, stranger = keygen(tmp_path, "stranger.pem")
    result = capc("verify", str(manifest), "--public-key", stranger, cwd=tmp_path)
    assert result.returncode == 1
    assert "manifest refused (signature): [untrusted-key]" in result.stderr
    assert public_key in result.stderr


def test_verify_refuses_an_edited_and_re_digested_manifest(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path)
    document = json.loads(manifest.read_text())
    document["capabilities"][0]["mcp"]["server_url"] = "https://evil.example.com/mcp"
    manifest.write_text(json.dumps(seal(document), indent=2, sort_keys=True) + "\n")
    result = capc("verify", str(manifest), "--public-key", public_key, cwd=tmp_path)
    assert result.returncode == 1 and "[other-manifest]" in result.stderr


def test_verify_refuses_an_edit_without_a_new_digest(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path)
    manifest.write_text(manifest.read_text().replace("mcp.deepwiki.com", "evil.example.com"))
    result = capc("verify", str(manifest), "--public-key", public_key, cwd=tmp_path)
    assert result.returncode == 1 and "manifest refused (digest)" in result.stderr


def test_verify_refuses_another_manifests_signature(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path / "a")
    # Another tree's manifest signed by the same key: a real signature, of another manifest.
    other = tree(tmp_path / "b", url="https://mcp.example.com/mcp")
    assert capc("compile", "-o", "m.json", "--sign-key", str(tmp_path / "a" / "signing.pem"),
                cwd=other).returncode == 0
    result = capc("verify", str(other / "m.json"), "--public-key", public_key, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = capc("verify", str(manifest), "--public-key", public_key,
                  "--sig", str(other / "m.json.sig"), cwd=tmp_path)
    assert result.returncode == 1 and "[other-manifest]" in result.stderr


def test_verify_refuses_a_missing_or_malformed_signature(tmp_path: Path) -> None:
    manifest, public_key = signed_tree(tmp_path)
    signature = manifest.with_name("m.json.sig")
    result = capc("verify", str(manifest), "--public-key", public_key, "--sig", "none.sig",
                  cwd=tmp_path)
    assert result.returncode == 1 and "[signature-missing]" in result.stderr
    signature.write_text("{not json")
    result = capc("verify", str(manifest), "--public-key", public_key, cwd=tmp_path)
    assert result.returncode == 1 and "[signature-malformed]" in result.stderr
    signature.write_text(json.dumps({"algorithm": "rsa", "public_key": public_key,
                                     "digest": "sha256:" + "0" * 64, "signature": ""}))
    result = capc("verify", str(manifest), "--public-key", public_key, cwd=tmp_path)
    assert result.returncode == 1 and "manifest refused (signature): [algorithm]" in result.stderr


def test_verify_with_an_independent_signer(tmp_path: Path) -> None:
    # tests/support signs from the documented bytes, without capc's signer.
    manifest, _ = signed_tree(tmp_path)
    key = new_key()
    sign_file(manifest, key)
    assert capc("verify", str(manifest), "--public-key", key.public_text,
                cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("bad", ["ed25519:AAAA", "missing.pem", "signing.pem"])
def test_verify_with_an_unreadable_key_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    manifest, _ = signed_tree(tmp_path)
    result = capc("verify", str(manifest), "--public-key", bad, cwd=tmp_path)
    assert result.returncode == 2 and "--public-key" in result.stderr
    assert_no_key_material(tmp_path / "signing.pem", result.stdout, result.stderr)


def test_verify_needs_a_key(tmp_path: Path) -> None:
    manifest, _ = signed_tree(tmp_path)
    result = capc("verify", str(manifest), cwd=tmp_path)
    assert result.returncode == 2 and "--public-key" in result.stderr
