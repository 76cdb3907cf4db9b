"""Capability entries built on first access, after a cheap check of every entry at load.

Turning an entry into frozen dataclasses (every schema, template and metadata value
deep-copied into read-only containers) is most of a load's cost, and an agent asks for a
few dozen of thousands. So the load only *checks* each entry, by running the model's own
parse (``compiler.runtime.manifest.model.parse_capability``) with the copying step left
out, and :class:`LazyCapabilities` builds the frozen entry the first time it is read. The
check and the build are one routine, so a manifest the load accepts cannot fail later; a
malformed entry is refused by the load, naming the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

Entry = TypeVar("Entry")


class LazyCapabilities(Mapping[str, Entry]):
    """A read-only mapping of code -> entry whose entries are built on first access.

    ``raw`` maps each code to what ``build`` turns into its entry (``manifest_file`` keeps
    each entry's JSON as immutable bytes). What is handed out is the builder's frozen
    entry, built once: two reads of a code return the same object.
    """

    __slots__ = ("_build", "_built", "_raw")

    def __init__(self, raw: dict[str, Any], build: Callable[[Any], Entry]) -> None:
        self._raw = raw
        self._build = build
        self._built: dict[str, Entry] = {}

    def __getitem__(self, code: str) -> Entry:
        entry = self._built.get(code)
        if entry is None:
            # setdefault: if two threads build the same entry, both get the first one.
            entry = self._built.setdefault(code, self._build(self._raw[code]))
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, code: object) -> bool:
        return code in self._raw

    def __repr__(self) -> str:
        return f"LazyCapabilities({len(self._raw)} entries, {len(self._built)} built)"
