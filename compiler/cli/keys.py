"""``capc keygen`` and ``capc verify``: signing keys and signed manifests (SPEC §6)."""

from __future__ import annotations

from pathlib import Path

import click

from compiler.errors import ManifestError


@click.command("keygen", epilog="""\b
Examples:
  capc keygen -o capc-signing.pem      # prints ed25519:BASE64, the key to trust
  capc keygen --public-key-of capc-signing.pem   # the public key of an existing key""")
@click.option("-o", "--output", "key_file", default=None, metavar="KEYFILE",
              help="Where the new private key is written (mode 0600; never overwritten).")
@click.option("--public-key-of", "existing", default=None, metavar="KEYFILE",
              help="Create nothing: print the public key of this existing private key.")
def keygen_command(key_file: str | None, existing: str | None) -> None:
    """Create an Ed25519 signing key; print its public key as `ed25519:BASE64`."""
    from compiler.signing import create_key_file, load_signing_key

    if existing is not None:
        if key_file is not None:
            raise click.UsageError("give either -o KEYFILE (a new key) or --public-key-of "
                                   "KEYFILE (an existing one), not both")
        key = load_signing_key(existing, {})
        assert key is not None  # a key file is given: a key or SigningKeyError
        click.echo(key.public_key.text)
        return
    if key_file is None:
        raise click.UsageError("missing -o KEYFILE (where the new key goes); "
                               "--public-key-of KEYFILE prints an existing key's public key")
    public_key = create_key_file(Path(key_file))
    click.echo(f"capc keygen: wrote the private key to {key_file} (mode 0600); keep it "
               "secret, trust the public key below", err=True)
    click.echo(public_key.text)


@click.command("verify", epilog="""\b
Examples:
  capc verify build/manifest.json --public-key "$CAPC_PUBLIC_KEY"
  capc verify m.json --public-key old.pub --public-key new.pub --sig m.json.sig""")
@click.argument("manifest_path", metavar="MANIFEST")
@click.option("--public-key", "public_keys", multiple=True, required=True, metavar="KEY",
              help="A trusted key: `ed25519:BASE64` or a PEM public key file (repeatable).")
@click.option("--sig", "signature_file", metavar="FILE",
              help="The signature file (default: MANIFEST.sig).")
def verify_command(manifest_path: str, public_keys: tuple[str, ...],
                   signature_file: str | None) -> None:
    """Check that MANIFEST's digest is valid and signed by one of the --public-key keys.

    Exits 0 when it is, 1 naming the failed check otherwise, 2 for a key or a manifest
    that cannot be read.
    """
    from compiler.manifest import read_manifest_model
    from compiler.runtime.errors import ManifestError as RefusedManifest
    from compiler.runtime.manifest.signature import (
        PublicKeyError,
        check_signature,
        parse_trusted_keys,
        read_signature,
        signature_path_for,
    )

    try:
        trusted = parse_trusted_keys(public_keys)
    except PublicKeyError as error:
        raise click.UsageError(f"--public-key: {error}") from None
    signature_path = Path(signature_file) if signature_file else signature_path_for(
        manifest_path)
    digest = str(read_manifest_model(manifest_path).digest)
    try:
        signature = read_signature(signature_path, manifest_path)
        check_signature(manifest_path, digest, signature, trusted)
    except RefusedManifest as refused:
        raise ManifestError(str(refused)) from None
    click.echo(f"{manifest_path}: verified: digest {digest}, signed by {signature.public_key}")
