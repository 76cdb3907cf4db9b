"""What a compile takes besides its sources, and what it gives back (no heavy imports).

Kept apart from the pipeline so a cached compile runs without importing jsonschema,
pydantic and the checks at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from types import MappingProxyType
from typing import Any

from compiler.diagnostics import Diagnostic
from compiler.project import DEFAULT_LOCK
from compiler.runtime.records import record


@record(frozen=True, slots=True)
class CompileOptions:
    """What changes how a tree compiles (flags, and what is known of installed plugins).

    ``plugins_snapshot`` is the plugin catalogue of ``compiler.plugins`` (``--plugins``);
    empty when plugins were not looked at, in which case internal codes are not checked.
    """

    strict: bool = False
    allow_private_networks: bool = False
    # CIDR ranges allowed exactly, strict or not ([tool.capc] allowed_networks,
    # --allow-network); validated by compiler.runtime.egress.addresses.parse_allowed_networks.
    allowed_networks: tuple[str, ...] = ()
    plugin_tools: frozenset[str] = frozenset()
    plugins_snapshot: dict[str, Any] = field(default_factory=dict)
    # The lock's servers (label -> compiler.pins.lockfile.LockedServer) when the tree has a
    # lock, else None; part of the cache key like every option.
    pins: dict[str, Any] | None = None
    lock_path: str = DEFAULT_LOCK
    # Extra RuntimeContext attributes the application passes ([tool.capc] context_attributes).
    context_attributes: tuple[str, ...] = ()
    # Every api capability needs a ToolTest case or ``untested: REASON`` ([tool.capc]
    # require_tool_tests): a warning per one without, an error under strict.
    require_tool_tests: bool = False


class CompileResult:
    """The manifest (None when there are errors) and every diagnostic, sorted.

    ``manifest_bytes``, when set, are the manifest file's bytes (``dump_manifest`` of
    ``manifest``), made once by a caching compile for its tree entry and for the writer.
    They may be held as pieces, in order (:meth:`from_file_pieces`: a manifest put
    together from stored entries' bytes, hundreds of megabytes for a large tree), which
    the writer and the cache write one after the other, never joined (:meth:`file_pieces`);
    :attr:`manifest_bytes` joins them when asked. A result made :meth:`from_file_bytes`
    reads its manifest back from them when it is first asked for (``capc compile``
    writes the bytes and never asks). Immutable; equal when the manifests and the
    diagnostics are.
    """

    __slots__ = ("_manifest", "_pieces", "diagnostics")

    _manifest: dict[str, Any] | _NotRead | None
    _pieces: Sequence[bytes | memoryview] | None
    diagnostics: tuple[Diagnostic, ...]

    def __init__(self, manifest: dict[str, Any] | None, diagnostics: tuple[Diagnostic, ...],
                 manifest_bytes: bytes | None = None) -> None:
        object.__setattr__(self, "_manifest", manifest)
        object.__setattr__(self, "diagnostics", diagnostics)
        object.__setattr__(self, "_pieces", None if manifest_bytes is None
                           else (manifest_bytes,))

    @classmethod
    def from_file_bytes(cls, content: bytes, diagnostics: tuple[Diagnostic, ...]
                        ) -> CompileResult:
        """A result whose manifest is that of the file bytes ``content`` (read on demand)."""
        return cls.from_file_pieces((content,), diagnostics)

    @classmethod
    def from_file_pieces(cls, pieces: Sequence[bytes | memoryview],
                         diagnostics: tuple[Diagnostic, ...]) -> CompileResult:
        """:meth:`from_file_bytes` of the bytes ``pieces`` make one after the other (kept
        as they are: see the class)."""
        result = cls(None, diagnostics)
        object.__setattr__(result, "_pieces", pieces)  # as given: pieces may be read lazily
        object.__setattr__(result, "_manifest", NOT_READ)
        return result

    @property
    def manifest_bytes(self) -> bytes | None:
        """The manifest file's bytes when they were made (joined now if held in pieces)."""
        pieces = self._pieces
        if pieces is None:
            return None
        return pieces[0] if len(pieces) == 1 and isinstance(pieces[0], bytes) \
            else b"".join(pieces)

    @property
    def has_file_bytes(self) -> bool:
        """Whether the manifest file's bytes were made (see :attr:`manifest_bytes`)."""
        return self._pieces is not None

    @property
    def manifest(self) -> dict[str, Any] | None:
        """The manifest's JSON document without its digest (None when there are errors)."""
        manifest = self._manifest
        if isinstance(manifest, _NotRead):
            content = self.manifest_bytes
            assert content is not None
            manifest = read_back(content)
            del manifest["digest"]  # the file's seal, not part of a compile's manifest
            object.__setattr__(self, "_manifest", manifest)
        return manifest

    @property
    def compiled(self) -> bool:
        """Whether the compile made a manifest (no error), without reading it back."""
        return self._manifest is not None

    def compiled_manifest(self) -> dict[str, Any]:
        """The manifest of a result that :attr:`compiled` (read back from its bytes if need be)."""
        manifest = self.manifest
        assert manifest is not None, "no manifest: the compile found errors"
        return manifest

    def file_bytes(self) -> bytes:
        """The manifest file's bytes (the manifest must not be None)."""
        content = self.manifest_bytes
        if content is not None:
            return content
        from compiler.runtime.manifest.format import dump_manifest

        return dump_manifest(self.compiled_manifest())

    def with_file_bytes(self) -> CompileResult:
        """This result with its manifest file's bytes, made once for the cache and the
        writer. A manifest the writer refuses (a NaN, a lone surrogate) keeps none: the
        writer then refuses it where it always did."""
        if self.has_file_bytes or not self.compiled:
            return self
        from compiler.runtime.manifest.format import dump_manifest

        try:
            content = dump_manifest(self.compiled_manifest())
        except (ValueError, TypeError, RecursionError):
            return self
        return CompileResult(self.manifest, self.diagnostics, content)

    def file_pieces(self) -> Sequence[bytes | memoryview]:
        """:meth:`file_bytes` as pieces to write one after the other (never joined)."""
        return self._pieces if self._pieces is not None else (self.file_bytes(),)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"CompileResult is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompileResult):
            return NotImplemented
        return self.manifest == other.manifest and self.diagnostics == other.diagnostics

    __hash__ = None  # type: ignore[assignment]  # a manifest is a dict

    def __repr__(self) -> str:
        return f"CompileResult(manifest={self.manifest!r}, diagnostics={self.diagnostics!r})"


class _NotRead:
    """A manifest not read back from its file bytes yet."""

    __slots__ = ()


NOT_READ = _NotRead()


def read_back(content: bytes) -> Any:
    """The document of manifest file bytes as ``json.loads`` reads them, by orjson when it can.

    The same values: the bytes are JSON that capc wrote; orjson refuses what it would read
    otherwise (integers past 64 bits, lone surrogates), and those go to ``json``; floats
    are read correctly rounded by both, and key order is the file's in both
    (tests/cache/test_compile_cache.py compares the hit with the compile).
    """
    import json

    try:
        import orjson
    except ImportError:  # pragma: no cover - a default install has orjson
        return json.loads(content)
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content)


@record(frozen=True, slots=True)
class TreeOverlay:
    """In-memory changes to the tree a compile reads, so a command can check the tree it
    would leave without writing it: ``files`` (path -> bytes) added or replacing what is on
    disk, ``deleted`` paths left out. Paths are as the command would write them (relative
    to the working directory, or absolute); a file outside the compiled roots is not part
    of the tree, as it would not be once written. ``written``: the data some of ``files``
    were rendered from by capc (path -> data), loaded as that data when their bytes can
    only load as it (compiler/source/written_files.py)."""

    files: Mapping[str, bytes] = field(default_factory=lambda: MappingProxyType({}))
    deleted: frozenset[str] = frozenset()
    written: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, files: Mapping[str, bytes], deleted: frozenset[str] = frozenset(),
           written: Mapping[str, Any] | None = None) -> TreeOverlay:
        """An overlay holding a read-only copy of ``files`` (and of ``written``)."""
        return cls(MappingProxyType(dict(files)), frozenset(deleted),
                   MappingProxyType(dict(written or {})))

    def __bool__(self) -> bool:
        return bool(self.files) or bool(self.deleted)
