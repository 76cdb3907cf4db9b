"""The compiler's fingerprint: what every compile cache entry is valid for.

The SHA-256 of every source, schema and template file of the installed ``compiler``
package plus the versions of the libraries whose behaviour shows in results. Any change to
the compiler or a schema (even without a version bump, as in an editable install) changes
it, so an entry written by other code is a miss (compiler/cache/store.py checks it on
every read), and a result is never served from old code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from functools import cache
from pathlib import Path

from compiler import __version__

# Module -> distribution of the libraries whose behaviour shows in results (messages too).
_LIBRARIES = {"yaml": "pyyaml", "jsonschema": "jsonschema", "referencing": "referencing",
              "jinja2": "jinja2"}

@cache
def compiler_fingerprint() -> str:
    """The fingerprint of this compiler: its package files and the libraries it relies on."""
    digest = hashlib.sha256(f"capc {__version__} python {sys.version}".encode())
    digest.update(_library_versions().encode())
    digest.update(package_fingerprint(Path(__file__).resolve().parent.parent).encode())
    return digest.hexdigest()


def _library_versions() -> str:
    """Each library's location and installed ``NAME-VERSION.dist-info`` folders.

    Read from the file system rather than with importlib.metadata, whose import alone
    would cost a no-change re-compile about 10% of its time.
    """
    listings: dict[str, list[str]] = {}
    found = []
    for module, distribution in _LIBRARIES.items():
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            found.append(f"{module}: absent")
            continue
        folder = os.path.dirname(os.path.dirname(spec.origin))
        if folder not in listings:
            try:
                listings[folder] = os.listdir(folder)
            except OSError:
                listings[folder] = []
        versions = sorted(name for name in listings[folder] if name.endswith(".dist-info")
                          and name.lower().replace("_", "-").startswith(distribution + "-"))
        found.append(f"{module}: {folder} {versions}")
    return "\n".join(found)


_FINGERPRINTED = (".py", ".json", ".j2")


def package_fingerprint(package: Path) -> str:
    """SHA-256 over every source, schema and template file below ``package``.

    Each file's relative path, size and bytes, in path order, in one running hash (every
    cache hit computes this: os.scandir and one hash, not pathlib's rglob and a hash per
    file, which cost three times as much).
    """
    digest = hashlib.sha256()
    for relative, full in sorted(_package_files(str(package), "")):
        content = _content(full)
        digest.update(f"{relative}\0{len(content)}\0".encode("utf-8", "surrogateescape"))
        digest.update(content)
    return digest.hexdigest()


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_READ_SIZE = 1 << 20


def _content(path: str) -> bytes:
    """The bytes of the file at ``path``, read with os.open and os.read: half of what
    ``open`` costs per file (its buffered reader object), and every compile reads the
    package's ~270 files."""
    handle = os.open(path, _READ_FLAGS)
    try:
        chunks = []
        while chunk := os.read(handle, _READ_SIZE):
            chunks.append(chunk)
    finally:
        os.close(handle)
    return b"".join(chunks)  # (one chunk: that very object, not a copy)


def _package_files(folder: str, prefix: str) -> list[tuple[str, str]]:
    """(relative path, path) of each fingerprinted file below ``folder``, bytecode skipped."""
    found: list[tuple[str, str]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir():
                if entry.name != "__pycache__":
                    found += _package_files(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith(_FINGERPRINTED):
                found.append((prefix + entry.name, entry.path))
    return found
