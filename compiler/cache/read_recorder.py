"""What a plugin-discovery child read from the file system, so its answer can be reused.

Plugin discovery (``python -m compiler.plugin_discovery``) runs third-party code in a child
interpreter; on a 2,000-file tree that child costs more than a cached compile itself. Its
answer, the catalogue, is a function of what it read: the modules it imported, the
distributions' metadata (``entry_points.txt``, ``METADATA``), any data file a plugin
opens, and which names each folder held when the import system looked. The child
records all of it with an audit hook (PEP 578: every ``open`` of a file for reading, every
``os.listdir``/``os.scandir``), adds the source file of every module it ended up with and
every ``sys.path`` folder (a folder that appears later could shadow a module), and sends
the list with its catalogue. compiler/cache/plugin_catalogue.py stores the catalogue with
each path's :func:`signature` and serves it again only while every signature is the same.

This is the import system's own trust model (bytecode is reused while its source's size
and time stamp hold), applied to every file discovery touched; the environment, the
interpreter and the working directory are part of the entry's key. What a plugin learns
other than from files (the network, the clock) is not covered: a catalogue is a
description of tools, and plugins are expected to describe theirs from their code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

Signature = tuple[int, int, int, int, int] | None
"""(device, inode, size, modification ns, change ns) of a path; None when it is absent."""

RACY_NS = 2_000_000_000
"""A path modified less than this before its signature was taken cannot be told apart from
one rewritten in the same tick of the file system's clock, so its signature is not relied
on (two seconds: above every common file system's time stamp granularity)."""

_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def signature(path: str) -> Signature:
    """What :func:`os.stat` says of ``path`` now, through symlinks (a module reached
    through a link changes when its target does); None when it cannot be read."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


class ReadRecorder:
    """The paths this process read, collected by an audit hook (cannot be removed: the
    child exits once discovery is over)."""

    __slots__ = ("files", "folders", "untracked")

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.folders: set[str] = set()
        self.untracked = False  # something read through a descriptor: not reusable

    @classmethod
    def installed(cls) -> ReadRecorder:
        """A recorder hooked into this interpreter's audit events from now on."""
        recorder = cls()
        sys.addaudithook(recorder.hear)
        return recorder

    def hear(self, event: str, arguments: tuple[Any, ...]) -> None:
        """The audit hook: note files opened for reading and folders listed."""
        if event == "open":
            path, mode, flags = (*arguments, None, None, None)[:3]
            if isinstance(mode, str) and any(letter in mode for letter in "wax+"):
                return
            if mode is None and isinstance(flags, int) and flags & _WRITING:
                return
            self._note(self.files, path)
        elif event in ("os.listdir", "os.scandir"):
            self._note(self.folders, arguments[0] if arguments else ".")

    def _note(self, into: set[str], path: object) -> None:
        if path is None:
            path = "."
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, str):
            into.add(os.path.abspath(path))
        else:  # a descriptor: what it names is not known here
            self.untracked = True

    def record(self, search_path: Iterable[str], modules: Mapping[str, Any]) -> dict[str, Any]:
        """The ``reads`` record: every path read, each module's file, each search folder."""
        files = set(self.files)
        for module in list(modules.values()):
            location = getattr(module, "__file__", None)
            if isinstance(location, str):
                files.add(os.path.abspath(location))
        folders = set(self.folders)
        folders.update(os.path.abspath(entry or ".") for entry in search_path
                       if isinstance(entry, str))
        return {"event": "reads", "files": sorted(files), "folders": sorted(folders),
                "untracked": self.untracked}
