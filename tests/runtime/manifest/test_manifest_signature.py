"""``load_manifest(trusted_keys=..., expected_digest=...)``: signed manifests (SPEC §6).

Manifests are sealed and signed by tests/support from the documented bytes, so the
loader is checked against docs/manifest.md rather than against capc's own signer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import ManifestError, ToolRegistry, load_manifest
from compiler.runtime.manifest.signature import SignatureRefused
from tests.support.runtime import mcp_capability, seal, write_manifest
from tests.support.signing import KeyPair, manifest_digest, new_key, sign_file


@pytest.fixture(scope="module")
def key() -> KeyPair:
    return new_key()


@pytest.fixture(scope="module")
def other_key() -> KeyPair:
    return new_key()


def signed_manifest(folder: Path, key: KeyPair, url: str = "https://mcp.deepwiki.com/mcp"
                    ) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = write_manifest(folder / "manifest.json",
                          [mcp_capability("deepwiki", server_url=url)])
    sign_file(path, key)
    return path


def load(path: Path, **kwargs: Any) -> Any:
    return load_manifest(path, registry=ToolRegistry(), **kwargs)


def refusal(path: Path, **kwargs: Any) -> SignatureRefused:
    with pytest.raises(SignatureRefused) as caught:
        load(path, **kwargs)
    assert caught.value.check == "signature"
    assert "manifest refused (signature)" in str(caught.value)
    return caught.value


def test_a_manifest_signed_by_a_trusted_key_loads(
    tmp_path: Path, key: KeyPair, other_key: KeyPair
) -> None:
    path = signed_manifest(tmp_path, key)
    manifest = load(path, trusted_keys=[other_key.public_text, key.public_text])
    assert manifest.codes() == ["deepwiki"]
    assert manifest.digest == manifest_digest(path)


def test_a_trusted_key_may_be_a_pem_public_key_file_or_pem_text(
    tmp_path: Path, key: KeyPair
) -> None:
    path = signed_manifest(tmp_path, key)
    pem = tmp_path / "capc-signing.pub.pem"
    pem.write_bytes(key.public_pem)
    assert load(path, trusted_keys=[pem]).codes() == ["deepwiki"]
    assert load(path, trusted_keys=[str(pem)]).codes() == ["deepwiki"]
    assert load(path, trusted_keys=[key.public_pem.decode()]).codes() == ["deepwiki"]


def test_a_signature_by_another_key_is_refused(
    tmp_path: Path, key: KeyPair, other_key: KeyPair
) -> None:
    path = signed_manifest(tmp_path, key)
    refused = refusal(path, trusted_keys=[other_key.public_text])
    assert refused.reason == "untrusted-key"
    assert key.public_text in str(refused) and "not a trusted key" in str(refused)


def test_an_edited_and_re_digested_manifest_is_refused(tmp_path: Path, key: KeyPair) -> None:
    path = signed_manifest(tmp_path, key)
    # The attack the digest alone cannot stop: edit the URL, recompute the digest.
    document = json.loads(path.read_text())
    document["capabilities"][0]["mcp"]["server_url"] = "https://evil.example.com/mcp"
    path.write_text(json.dumps(seal(document), indent=2, sort_keys=True) + "\n")
    assert load(path).capability("deepwiki").mcp.server_url == "https://evil.example.com/mcp"
    refused = refusal(path, trusted_keys=[key.public_text])
    assert refused.reason == "other-manifest"
    assert manifest_digest(path) in str(refused)


def test_another_manifests_signature_is_refused(tmp_path: Path, key: KeyPair) -> None:
    genuine = signed_manifest(tmp_path / "genuine", key)
    other = signed_manifest(tmp_path / "other", key, url="https://evil.example.com/mcp")
    shutil.copyfile(other.with_name("manifest.json.sig"), genuine.with_name("manifest.json.sig"))
    assert refusal(genuine, trusted_keys=[key.public_text]).reason == "other-manifest"
    # ...also when pointed at it explicitly.
    refused = refusal(signed_manifest(tmp_path / "third", key), trusted_keys=[key.public_text],
                      signature_path=other.with_name("manifest.json.sig"))
    assert refused.reason == "other-manifest"


def test_a_missing_signature_is_refused(tmp_path: Path, key: KeyPair) -> None:
    path = write_manifest(tmp_path / "m.json", [mcp_capability("deepwiki")])
    refused = refusal(path, trusted_keys=[key.public_text])
    assert refused.reason == "signature-missing"
    assert "m.json.sig" in str(refused)


def _valid(key: KeyPair, path: Path) -> dict[str, str]:
    return key.signature_document(manifest_digest(path))


MALFORMED = [
    ("not json", lambda doc: b"{nope"),
    ("a list", lambda doc: b"[]"),
    ("a key missing", lambda doc: {k: v for k, v in doc.items() if k != "signature"}),
    ("an extra key", lambda doc: {**doc, "comment": "hi"}),
    ("a number", lambda doc: {**doc, "signature": 7}),
    ("bad base64", lambda doc: {**doc, "signature": "***"}),
    ("a short signature", lambda doc: {**doc, "signature": "AAAA"}),
    ("a bad public key", lambda doc: {**doc, "public_key": "ed25519:AAAA"}),
    ("a public key path", lambda doc: {**doc, "public_key": "/etc/passwd"}),
    ("a bad digest", lambda doc: {**doc, "digest": "md5:abc"}),
    ("huge", lambda doc: b" " * 70000 + b"{}"),
    ("a signed_at in words", lambda doc: {**doc, "signed_at": "yesterday"}),
    ("a signed_at without microseconds", lambda doc: {**doc, "signed_at": "2026-12-05T09:00:00Z"}),
    ("a signed_at with an offset",
     lambda doc: {**doc, "signed_at": "2026-12-05T09:00:00.000000+01:00"}),
    ("a signed_at in month 13", lambda doc: {**doc, "signed_at": "2026-13-05T09:00:00.000000Z"}),
    ("a signed_at number", lambda doc: {**doc, "signed_at": 1764925200}),
]


@pytest.mark.parametrize(("label", "corrupt"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_signature_file_is_refused(
    tmp_path: Path, key: KeyPair, label: str, corrupt: Any
) -> None:
    path = signed_manifest(tmp_path, key)
    content = corrupt(_valid(key, path))
    raw = content if isinstance(content, bytes) else json.dumps(content).encode()
    path.with_name("manifest.json.sig").write_bytes(raw)
    assert refusal(path, trusted_keys=[key.public_text]).reason == "signature-malformed"


def test_another_algorithm_is_refused(tmp_path: Path, key: KeyPair) -> None:
    path = signed_manifest(tmp_path, key)
    path.with_name("manifest.json.sig").write_text(
        json.dumps({**_valid(key, path), "algorithm": "none"}))
    refused = refusal(path, trusted_keys=[key.public_text])
    assert refused.reason == "algorithm" and "'none'" in str(refused)


def test_a_signature_over_other_bytes_is_invalid(
    tmp_path: Path, key: KeyPair, other_key: KeyPair
) -> None:
    path = signed_manifest(tmp_path, key)
    sig = path.with_name("manifest.json.sig")
    digest = manifest_digest(path)
    # The digest signed without the domain prefix: a valid Ed25519 signature of other bytes.
    sig.write_text(json.dumps(key.signature_document(digest, message=digest.encode())))
    assert refusal(path, trusted_keys=[key.public_text]).reason == "signature-invalid"
    # Another key's signature relabelled with the trusted key.
    forged = {**other_key.signature_document(digest), "public_key": key.public_text}
    sig.write_text(json.dumps(forged))
    assert refusal(path, trusted_keys=[key.public_text]).reason == "signature-invalid"


def test_an_empty_trust_list_refuses_everything(tmp_path: Path, key: KeyPair) -> None:
    path = signed_manifest(tmp_path, key)
    assert refusal(path, trusted_keys=[]).reason == "untrusted-key"


@pytest.mark.parametrize("bad", ["ed25519:AAAA", "ed25519:", "no-such-file.pem"])
def test_an_unreadable_trusted_key_is_refused_naming_it(
    tmp_path: Path, key: KeyPair, bad: str
) -> None:
    path = signed_manifest(tmp_path, key)
    with pytest.raises(ManifestError) as caught:
        load(path, trusted_keys=[key.public_text, bad])
    assert caught.value.check == "trusted_keys"


def test_a_single_key_instead_of_a_list_is_refused(tmp_path: Path, key: KeyPair) -> None:
    path = signed_manifest(tmp_path, key)
    with pytest.raises(ManifestError) as caught:
        load(path, trusted_keys=key.public_text)
    assert caught.value.check == "trusted_keys" and "list" in str(caught.value)


def test_a_private_key_is_not_accepted_as_trusted(tmp_path: Path, key: KeyPair) -> None:
    path = signed_manifest(tmp_path, key)
    secret = tmp_path / "private.pem"
    secret.write_bytes(key.private_pem)
    with pytest.raises(ManifestError) as caught:
        load(path, trusted_keys=[secret])
    assert caught.value.check == "trusted_keys" and "private key" in str(caught.value)
    assert key.private_pem.decode().splitlines()[1] not in str(caught.value)


def test_expected_digest_pins_the_manifest(tmp_path: Path, key: KeyPair) -> None:
    path = signed_manifest(tmp_path, key)
    digest = manifest_digest(path)
    assert load(path, expected_digest=digest).digest == digest
    other = "sha256:" + "0" * 64
    with pytest.raises(ManifestError) as caught:
        load(path, expected_digest=other)
    assert caught.value.check == "digest" and other in str(caught.value)
    with pytest.raises(ManifestError) as malformed:
        load(path, expected_digest="0" * 64)
    assert malformed.value.check == "digest"
    # Both together: the digest pin and the signature.
    assert load(path, expected_digest=digest, trusted_keys=[key.public_text]).digest == digest


def test_a_refused_signature_stops_before_plugins_are_discovered(
    tmp_path: Path, key: KeyPair, other_key: KeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = signed_manifest(tmp_path, key)
    discovered: list[object] = []

    def discover(cls: type, context: object = None) -> ToolRegistry:
        discovered.append(context)
        return ToolRegistry()

    monkeypatch.setattr(ToolRegistry, "discover", classmethod(discover))
    with pytest.raises(SignatureRefused):
        load_manifest(path, trusted_keys=[other_key.public_text])
    assert discovered == []
    load_manifest(path, trusted_keys=[key.public_text])
    assert discovered == [None]


def test_the_signing_time_is_signed_and_an_earlier_capcs_signature_still_verifies(
    tmp_path: Path, key: KeyPair
) -> None:
    path = signed_manifest(tmp_path, key)
    sig = path.with_name("manifest.json.sig")
    digest = manifest_digest(path)
    sig.write_text(json.dumps(key.signature_document(digest, signed_at=TIME)))
    assert load_manifest(path, registry=ToolRegistry(), trusted_keys=[key.public_text])
    # A later time written over a genuine signature: the signature no longer verifies.
    moved = {**key.signature_document(digest, signed_at=TIME),
             "signed_at": "2027-01-01T00:00:00.000000Z"}
    sig.write_text(json.dumps(moved))
    assert refusal(path, trusted_keys=[key.public_text]).reason == "signature-invalid"
    # Dropping the time from a v2 signature does not make it a valid v1 one.
    sig.write_text(json.dumps({k: v for k, v in moved.items() if k != "signed_at"}))
    assert refusal(path, trusted_keys=[key.public_text]).reason == "signature-invalid"
    sig.write_text(json.dumps(key.signature_document(digest)))  # v1: still accepted
    assert load_manifest(path, registry=ToolRegistry(), trusted_keys=[key.public_text])


TIME = "2026-12-05T09:00:00.000000Z"
