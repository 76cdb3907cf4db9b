"""Find the source files under the given roots, in a machine-independent order."""

from __future__ import annotations

import os
from dataclasses import field
from pathlib import Path, PurePosixPath

from compiler.errors import InputOutputError
from compiler.runtime.records import record

SOURCE_SUFFIXES = (".yaml", ".yml", ".yaml.j2")


@record(frozen=True, slots=True)
class SourceFile:
    """A file to compile: where it is on disk and the path diagnostics and manifest show.

    ``disk_path`` as pathlib spells it, in a string: the os functions that read it take
    one, and a Path per file cost a 2,000-file compile about 4 ms."""

    disk_path: str
    display_path: str
    # The resolved root folder it was found under (None for a file named on the command
    # line): a symlink leading out of it is refused when the file is read.
    tree: str | None = field(default=None, compare=False)

    @property
    def is_template(self) -> bool:
        """``*.yaml.j2`` files are rendered with Jinja2 before parsing."""
        return self.display_path.endswith(".yaml.j2")


def display_path(path: Path, cwd: Path | None = None) -> str:
    """POSIX path relative to ``cwd`` (``../`` when outside it; never absolute)."""
    return _display_path(path, os.path.realpath(cwd or Path.cwd()))


def _display_path(path: Path, base: str) -> str:
    # os.path.realpath on strings: the same answer as Path.resolve(), several times faster,
    # and the base is resolved once per discovery instead of once per file.
    # The folder is resolved, the file name kept: a symlinked file shows where it was
    # found, not its target (a dangling link is reported under its own name).
    located = os.path.join(os.path.realpath(path.parent), path.name)
    return PurePosixPath(Path(os.path.relpath(located, base))).as_posix()


def _is_source(name: str) -> bool:
    return name.endswith(SOURCE_SUFFIXES) and not name.startswith(".")


def discover(roots: list[str], cwd: Path | None = None,
             folders: list[str] | None = None) -> list[SourceFile]:
    """Every source file under ``roots`` (files or folders), hidden entries skipped.

    The order is the sorted POSIX display path, never the file system's order.
    ``folders``, when given, receives every folder listed (compiler/cache/tree_index.py
    re-checks them before reusing a listing).
    """
    found: dict[str, SourceFile] = {}
    base = os.path.realpath(cwd or Path.cwd())
    for root in roots:
        root_path = Path(root)
        # A FIFO or device named as a root is a source too: reading it reports a located
        # not-regular-file error (never a blocking read), not "no such file".
        if root_path.is_file() or (root_path.exists() and not root_path.is_dir()):
            shown = display_path(root_path, cwd)
            found[shown] = SourceFile(str(root_path), shown)
            continue
        if not root_path.is_dir():
            raise InputOutputError(f"{root}: no such file or directory")
        real_root = os.path.realpath(root_path)
        _walk(str(root_path), real_root, base, found, real_root, folders)
    return [found[key] for key in sorted(found)]


def _walk(folder: str, real_folder: str, base: str, found: dict[str, SourceFile],
          tree: str, folders: list[str] | None = None) -> None:
    """What ``os.walk`` (no symlinked folders followed) finds under ``folder``, with one
    ``scandir`` per folder and no ``realpath`` per file.

    A folder that is not a symlink resolves to its resolved parent plus its name, and so
    does a file that is not a symlink; only symlinked files are resolved one by one.
    """
    if folders is not None:
        folders.append(folder)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return  # as os.walk: an unreadable folder is skipped
    prefix = base.rstrip(os.sep) + os.sep
    # What pathlib makes of a path below ``folder`` (``folder`` is spelled so already):
    # no "./" before what the working directory holds.
    parent = "" if folder == os.curdir else folder
    subfolders = []
    for entry in entries:
        name = entry.name
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder = False
        if is_folder:
            if not name.startswith(".") and not entry.is_symlink():
                subfolders.append(entry)
            continue
        if not _is_source(name):
            continue
        path = os.path.join(parent, name)
        resolved = os.path.join(real_folder, name)
        if resolved.startswith(prefix):
            shown = resolved[len(prefix):].replace(os.sep, "/")
        else:
            shown = _display_path(Path(path), base)
        found[shown] = SourceFile(path, shown, tree)
    # After this folder's files, as os.walk does: when two paths show the same (a link
    # beside its target), the one found last is kept, in both walks.
    for entry in subfolders:
        _walk(os.path.join(parent, entry.name), os.path.join(real_folder, entry.name), base,
              found, tree, folders)
