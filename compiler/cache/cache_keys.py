"""The per-machine key that authenticates compile-cache entries (see compiler/cache/store.py).

The key is what makes the cache not input: an entry is served only when its HMAC-SHA256
verifies under this key, which lives beside the user cache folder (``capc.key`` in the
user cache root), created 0600 by this user, and never in the working tree.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from compiler.atomic import create_temporary
from compiler.source.safe_read import UnsafeFile, read_regular_file

KEY_FILE_NAME = "capc.key"
_KEY_BYTES = 32


def user_cache_root() -> Path:
    """``$XDG_CACHE_HOME`` when it is an absolute path (the XDG rule), else ``~/.cache``."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    if configured and os.path.isabs(configured):
        return Path(configured)
    return Path(os.path.expanduser("~")) / ".cache"


def _inside(path: Path, folder: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


_EPHEMERAL_KEY: list[bytes] = []


def machine_key(cwd: Path | None = None) -> bytes:
    """The per-machine secret that authenticates cache entries.

    It lives in ``capc.key`` in the user cache root, created 0600 by this user. A key
    file that is not a regular file, not this user's, readable by others, or of the wrong
    size is replaced. When that location lies inside the working tree (say
    ``XDG_CACHE_HOME=$PWD/.cache`` in CI), a file there could have come with the
    checkout, so a key for this process only is used: the cache then only saves work
    within one run, and cannot be fed from outside.
    """
    path = user_cache_root() / KEY_FILE_NAME
    if _inside(path, cwd or Path.cwd()):
        return ephemeral_key()
    key = _read_key(path)
    if key is not None:
        return key
    return _create_key(path) or ephemeral_key()


def ephemeral_key() -> bytes:
    if not _EPHEMERAL_KEY:
        _EPHEMERAL_KEY.append(os.urandom(_KEY_BYTES))
    return _EPHEMERAL_KEY[0]


def _read_key(path: Path) -> bytes | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    private = not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if not (stat.S_ISREG(info.st_mode) and private and owned):
        return None
    try:
        key = read_regular_file(path, _KEY_BYTES, follow_symlinks=False)
    except (OSError, UnsafeFile):
        return None
    return key if len(key) == _KEY_BYTES else None


def _create_key(path: Path) -> bytes | None:
    key = os.urandom(_KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = create_temporary(path.parent, ".capc-key.")
    except OSError:
        return None
    try:
        os.chmod(temporary, 0o600)  # create_temporary's mode, made explicit
        with os.fdopen(handle, "wb") as stream:
            stream.write(key)
        # Two runs racing: the later replace wins, and the loser re-reads that key.
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        return None
    return _read_key(path) or key
