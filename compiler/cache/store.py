"""A content-hash cache of compile results, so an unchanged tree re-compiles in a blink.

Two levels, both keyed by content, never by time stamps:

- per file: the loaded documents (data, first line, and the positions compiles asked
  of them: compiler/cache/position_answers.py) and the loading diagnostics of one plain YAML
  file, keyed by its display path and the SHA-256 of its bytes. Editing a file changes
  its key; the other files' entries still hit.
- per tree: the whole :class:`CompileResult` (the manifest file's bytes, or the manifest
  when it cannot be written, and the diagnostics), keyed by every file's (path, hash),
  the template variables and the options (the compile is pure: one key, one result).

Both keys include the compiler fingerprint (compiler/cache/fingerprint.py: every source and
schema file of the package, and the versions of the libraries whose behaviour shows in
results), so a result is never served from old code, even in an editable install.

Entries are ``marshal`` data (plain values: no code runs on load) and bytes stored as
they are (compiler/cache/file_packs.py), replaced whole (``os.replace``), each with its
full key checked on read: a corrupt or foreign entry is a miss; a full disk costs speed.

The cache is not input. A result served from it is never re-checked, so an entry
planted by whoever can write the folder (a ``.capc-cache/`` committed in a pull request,
a CI cache restored from another branch) would decide what ``validate`` reports. Hence:

- the default folder is the user's cache directory (``$XDG_CACHE_HOME/capc``, else
  ``~/.cache/capc``), never the checkout;
- every entry is authenticated with HMAC-SHA256 under a per-machine key (created 0600
  beside the default folder, ``capc.key`` in the user cache root, never in the working
  tree and never in the cache folder itself) and verified before ``marshal`` reads a
  byte of it: a forged or copied entry is a miss, even in a ``--cache-dir`` inside the
  checkout;
- an entry that is a symlink, FIFO, device or other non-regular file is ignored, and
  entries are read with a bounded read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import marshal
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.atomic import create_temporary, joined_runs
from compiler.cache.cache_keys import ephemeral_key, machine_key, user_cache_root
from compiler.cache.file_packs import (
    FileResult,
    PackPiece,
    StoredFile,
    diagnostic_from_plain,
    diagnostic_to_plain,
    file_to_plain,
    pack,
    unpack,
)
from compiler.cache.fingerprint import compiler_fingerprint
from compiler.cache.position_answers import answers_of
from compiler.compile_result import CompileOptions, CompileResult, read_back
from compiler.diagnostics import Diagnostic
from compiler.runtime.collector import collector_paused
from compiler.runtime.records import record
from compiler.source.safe_read import UnsafeFile, read_regular_file

if TYPE_CHECKING:
    from compiler.cache.deferred_entries import DeferredEntries

CACHE_DIR_VARIABLE = "CAPC_CACHE_DIR"
NO_CACHE_VARIABLE = "CAPC_NO_CACHE"
CACHE_FOLDER_NAME = "capc"
ENTRY_FORMAT = 7  # bump when the layout of an entry changes
ENTRY_MAGIC = b"capc-cache\x03"
MAX_ENTRY_BYTES = 512 * 1024 * 1024
"""An entry larger than this is not read (a whole-tree manifest of 100 MiB sources fits)."""
MAC_BYTES = 32
ENTRY_HEADER = struct.Struct(">32sQ")  # an entry's selector, the size of its marshal part
_NO_SELECTOR = bytes(32)
_WRITTEN_RUN = 4 * 1024 * 1024  # a tail given in pieces is written this much at a time

def content_hash(raw: bytes) -> str:
    """The SHA-256 hex digest of a file's bytes: the identity of its content."""
    return hashlib.sha256(raw).hexdigest()


def options_key(options: CompileOptions) -> str:
    """Every compile option in a canonical text form (sets sorted, mappings key-sorted)."""
    fields = {}
    for option in dataclasses.fields(options):
        value = getattr(options, option.name)
        if isinstance(value, frozenset | set):
            value = sorted(map(str, value))
        fields[option.name] = value
    return json.dumps(fields, sort_keys=True, default=repr)


def cache_disabled() -> bool:
    """True when ``CAPC_NO_CACHE`` is set to anything but empty or ``0``."""
    return os.environ.get(NO_CACHE_VARIABLE, "") not in ("", "0")


def default_cache_dir(cwd: Path | None = None) -> Path:
    """``$CAPC_CACHE_DIR`` when set, else ``capc`` in the user cache directory.

    Never a folder of the working tree by default: what a checkout contains is input.
    """
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    return Path(configured) if configured else user_cache_root() / CACHE_FOLDER_NAME


@record(frozen=True, slots=True)
class CompileCache:
    """The entries of one source tree (its roots and options) in one cache directory.

    ``held``: entries are handed to it instead of written (an import's check: stored once
    the tree is known to be written, compiler/cache/deferred_entries.py); ``reads`` false:
    every entry reads as absent (the batches of such a check read nothing).
    """

    directory: Path
    tree_identity: str
    key: bytes = dataclasses.field(repr=False, default=b"")
    held: DeferredEntries | None = dataclasses.field(repr=False, compare=False, default=None)
    reads: bool = True

    @classmethod
    def for_tree(cls, directory: Path, roots: Iterable[str], options: CompileOptions,
                 cwd: Path | None = None) -> CompileCache:
        """The cache of the tree compiled from ``roots`` with ``options``, in ``directory``.

        Trees get separate entry files (the working directory is part of a tree's
        identity, as the shared default folder serves every checkout), so compiling two
        trees in turn does not thrash.
        """
        where = os.path.realpath(cwd or Path.cwd())
        identity = _sha256("\0".join([where, *roots, options_key(options)]))
        return cls(directory, identity[:32], machine_key(cwd))

    def file_key(self, display_path: str, raw: bytes) -> str:
        """The key of one file's load result (the fingerprint is checked per pack)."""
        return _sha256(f"{display_path}\0{content_hash(raw)}")

    def tree_key(self, file_keys: Iterable[str], variables: Mapping[str, Any],
                 variable_problems: Iterable[Diagnostic], options: CompileOptions) -> str:
        """The key of a whole compile: every file key, the template variables, the options."""
        variables_text = repr([_typed(variables),
                               [diagnostic_to_plain(d) for d in variable_problems]])
        return _sha256("\0".join([options_key(options), variables_text, *file_keys]))

    # Per-file load results, all in one pack so a cold run writes one file, not thousands.

    def load_files(self) -> dict[str, StoredFile]:
        """The per-file results stored by the last run on this tree (empty when none)."""
        stored = self.read_entry("files")
        if stored is None:
            return {}
        try:
            (answers, layout), tail = stored
            pieces: list[PackPiece] = []
            start = 0
            for kind, size in layout:
                pieces.append((kind, memoryview(tail)[start:start + size]))
                start += size
            if start != len(tail):
                return {}
            with collector_paused():  # rebuilding an entry only allocates
                files = unpack(pieces)
            return {key: StoredFile(documents, answers[key],
                                    [diagnostic_from_plain(item) for item in diagnostics])
                    for key, (documents, diagnostics) in files.items()}
        except (TypeError, ValueError, KeyError, EOFError):
            return {}

    def pack_files(self, results: Mapping[str, FileResult]) -> list[PackPiece] | None:
        """The documents and diagnostics of ``results``, serialised now (before a compile
        that may rely on owning the documents' data); None when they cannot be stored."""
        try:
            return pack({key: file_to_plain(*value) for key, value in results.items()})
        except ValueError:
            return None

    def store_files(self, packed: Sequence[PackPiece], results: Mapping[str, FileResult]
                    ) -> None:
        """Replace the pack with ``packed`` (the current files only: no unbounded growth)
        and the positions the compile asked of each of their documents.

        The entry: (answers by file key, each piece's kind and size), then the pieces."""
        answers = {key: [answers_of(document) for document in documents]
                   for key, (documents, _) in results.items()}
        self.write_entry("files", (answers, [(kind, len(piece)) for kind, piece in packed]),
                         [piece for _, piece in packed])

    def load_result(self, key: str) -> CompileResult | None:
        """The result stored for ``key``, or None."""
        stored = self.read_entry("tree", _selector(key))
        if stored is None:
            return None
        try:
            (stored_key, manifest, plain, _), content = stored
            if stored_key != key:
                return None
            diagnostics = tuple(diagnostic_from_plain(item) for item in plain)
            if manifest is None and content:
                manifest = read_back(content)
                del manifest["digest"]  # the file's seal, not part of a compile's manifest
        except (TypeError, ValueError, KeyError):
            return None
        return CompileResult(manifest, diagnostics, content or None)

    def store_result(self, key: str, result: CompileResult, placed: Any = None) -> None:
        """Remember ``result`` as what ``key`` compiles to.

        With its file bytes made, those are stored instead of the manifest, after the
        marshal part and not in it (its pieces written in turn, never joined), and a hit
        need not dump them again (its manifest is read back from them, its keys then in
        the file's sorted order). ``placed``: where entries' bytes are in them
        (compiler/cache/entry_fragments.py)."""
        plain = [diagnostic_to_plain(d) for d in result.diagnostics]
        made = result.has_file_bytes
        manifest, placed = (None, placed) if made else (result.manifest, None)
        self.write_entry("tree", (key, manifest, plain, placed),
                         result.file_pieces() if made else b"", _selector(key))

    # Storage: one file per (tree, entry kind), whole-file replacement only. An entry is
    # ENTRY_MAGIC, the HMAC, then what it covers: a selector (a hash of what the entry
    # answers, or zeros) and the length of the marshal part, the marshal part, and the
    # tail (bytes stored as they are, not copied into marshal's output).

    def _path(self, kind: str) -> Path:
        return self.directory / f"{self.tree_identity}.{kind}"

    def signer(self, kind: str) -> hmac.HMAC:
        """The HMAC of an entry of ``kind``, its prefix (format, tree, kind) fed."""
        signed = hmac.new(self.key or ephemeral_key(), digestmod=hashlib.sha256)
        signed.update(f"{ENTRY_FORMAT}\0{self.tree_identity}\0{kind}\0".encode())
        return signed

    def _mac(self, kind: str, *parts: bytes | memoryview) -> bytes:
        signed = self.signer(kind)
        for part in parts:
            signed.update(part)
        return signed.digest()

    def seal(self, kind: str, head: bytes, tail: bytes = b"",
             selector: bytes = _NO_SELECTOR) -> bytes:
        """The bytes stored for an entry whose marshal part is ``head``."""
        return self._sealed_header(kind, head, tail, selector) + tail

    def _sealed_header(self, kind: str, head: bytes, tail: bytes, selector: bytes) -> bytes:
        # Everything but the tail, which is written apart (no copy of a large entry).
        covered = ENTRY_HEADER.pack(selector, len(head))
        return ENTRY_MAGIC + self._mac(kind, covered, head, tail) + covered + head

    def unseal(self, kind: str, sealed: bytes, selector: bytes | None = _NO_SELECTOR
               ) -> tuple[memoryview, memoryview] | None:
        """The entry's marshal part and tail when it answers ``selector`` (None: whatever
        it answers) and its HMAC verifies under this machine's key (checked in that order:
        an entry for another key is a miss, whoever wrote it, and costs no HMAC)."""
        start = len(ENTRY_MAGIC) + MAC_BYTES
        if (len(sealed) > MAX_ENTRY_BYTES or len(sealed) < start + ENTRY_HEADER.size
                or not sealed.startswith(ENTRY_MAGIC)):
            return None
        found, head_size = ENTRY_HEADER.unpack_from(sealed, start)
        if selector is not None and found != selector:
            return None
        covered = memoryview(sealed)[start:]
        if not hmac.compare_digest(sealed[len(ENTRY_MAGIC):start], self._mac(kind, covered)):
            return None
        body = covered[ENTRY_HEADER.size:]
        return body[:head_size], body[head_size:]

    def read_entry(self, kind: str, selector: bytes | None = _NO_SELECTOR
                   ) -> tuple[Any, bytes] | None:
        """The entry's payload and tail, or None (absent, foreign, corrupt, outdated)."""
        if not self.reads:
            return None
        try:
            # Bounded, regular files only (a symlink, FIFO or device is a miss).
            sealed = read_regular_file(self._path(kind), MAX_ENTRY_BYTES,
                                       follow_symlinks=False)
        except (OSError, UnsafeFile):
            return None
        # Authenticated before marshal sees a byte: marshal is not meant for hostile data.
        parts = self.unseal(kind, sealed, selector)
        if parts is None:
            return None
        payload = entry_payload(parts[0])
        return None if payload is None else (payload[0], bytes(parts[1]))

    def write_entry(self, kind: str, payload: Any,
                    tail: bytes | Iterable[bytes | memoryview] = b"",
                    selector: bytes = _NO_SELECTOR) -> None:
        """Replace the entry of ``kind`` (best effort: a failure only costs speed); ``tail``:
        its bytes, or its pieces in order (never joined whole: see :meth:`_write_pieces`)."""
        if self.held is not None:
            self.held.hold(self, kind, payload, [tail] if isinstance(tail, bytes) else tail,
                           selector)
            return
        if not isinstance(tail, bytes):
            self._write_pieces(kind, payload, tail, selector)
            return
        opened = self._new_entry_file(kind, payload)
        if opened is None:
            return
        head, handle, temporary = opened
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(self._sealed_header(kind, head, tail, selector))
                stream.write(tail)
            os.replace(temporary, self._path(kind))
        except OSError:
            Path(temporary).unlink(missing_ok=True)

    def _write_pieces(self, kind: str, payload: Any, pieces: Iterable[bytes | memoryview],
                      selector: bytes) -> None:
        """:meth:`write_entry` of a tail given in pieces (each made when it is written, as
        a held batch's are decompressed): the header is written with an empty HMAC, then
        the pieces (a few MiB at once: the entries' thousands cost a hash update and a write
        each), then the HMAC over them in its place, before the file is renamed in."""
        opened = self._new_entry_file(kind, payload)
        if opened is None:
            return
        head, handle, temporary = opened
        covered = ENTRY_HEADER.pack(selector, len(head))
        signed = self.signer(kind)
        signed.update(covered)
        signed.update(head)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(ENTRY_MAGIC + bytes(MAC_BYTES) + covered + head)
                for chunk in joined_runs(pieces, _WRITTEN_RUN):
                    signed.update(chunk)
                    stream.write(chunk)
                stream.seek(len(ENTRY_MAGIC))
                stream.write(signed.digest())
            os.replace(temporary, self._path(kind))
        except OSError:
            Path(temporary).unlink(missing_ok=True)

    def _new_entry_file(self, kind: str, payload: Any) -> tuple[bytes, int, str] | None:
        """An entry's marshal part and temporary file (descriptor, path), or None: not cached."""
        try:
            head = marshal.dumps((ENTRY_FORMAT, compiler_fingerprint(), payload))
        except ValueError:
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = create_temporary(self.directory, f".{kind}.")
        except OSError:
            return None
        return head, handle, temporary


def entry_payload(head: bytes | memoryview) -> tuple[Any] | None:
    """The payload of an authenticated entry's marshalled part (in a 1-tuple: a payload may
    be None), or None when it is of another format or compiler."""
    try:
        with collector_paused():  # rebuilding an entry only allocates
            stored = marshal.loads(head)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(stored, tuple) or len(stored) != 3:
        return None
    entry_format, fingerprint, payload = stored
    if entry_format != ENTRY_FORMAT or fingerprint != compiler_fingerprint():
        return None
    return (payload,)


def entry_selector(sealed: bytes) -> bytes | None:
    """What a stored entry says it answers (its selector), read before any HMAC check;
    None when ``sealed`` is too short to hold one."""
    start = len(ENTRY_MAGIC) + MAC_BYTES
    if len(sealed) < start + ENTRY_HEADER.size:
        return None
    selector: bytes = ENTRY_HEADER.unpack_from(sealed, start)[0]
    return selector


def _selector(key: str) -> bytes:
    """What a tree entry answers, readable before its HMAC is checked: a hash of its key."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _typed(value: Any) -> Any:
    """A key-safe form of template variables: types kept (1, "1" and True differ) and
    mapping order kept (a template may iterate over it); never sorted, so mixed key
    types are fine."""
    if isinstance(value, Mapping):
        return ("map", [(_typed(key), _typed(item)) for key, item in value.items()])
    if isinstance(value, list | tuple):
        return ("list", [_typed(item) for item in value])
    return (type(value).__name__, repr(value))
