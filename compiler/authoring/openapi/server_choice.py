"""Which of a document's servers an import uses: https when the document lists one, or the
``--server`` the command line gave, recorded in the generated files.

Real documents often list an ``http://`` server before the ``https://`` one; the first
entry (what :mod:`compiler.authoring.openapi.servers` takes) would then give tools that
send their credentials in the clear, which ``capc compile --strict`` refuses. Before
mapping, every ``servers`` list (the document's, a path item's, an operation's) is put
in the order the import prefers: a protocol-relative url (``//host/path``) reads as
``https://host/path``, and the first https server comes first. Diagnostics about a server
still point at the entry the document wrote (the moved indices are translated back).

``--server URL`` is recorded in each generated file's header (``# Imported with --server
URL``), so ``--check`` regenerates with it and CI needs no flag the files do not say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from compiler.authoring.openapi.document import DocumentFile, Path_
from compiler.authoring.openapi.document_text import header_record, header_records
from compiler.authoring.openapi.existing import GeneratedFiles
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.servers import OPENAPI_SERVER
from compiler.diagnostics import Diagnostic, Location
from compiler.errors import ExitCode
from compiler.report.escape import escape_control

RECORD_PREFIX = "# Imported with --server "
_RECORD_TAIL = " (`--check` regenerates with it)."
_RECORD_AFTER = "# Re-importing regenerates this file"
MAX_SERVER_CHARS = 2048
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


@dataclass(slots=True)
class ServersChosen(DocumentFile):
    """A document whose ``servers`` lists were reordered: ``moved`` maps a position in the
    reordered data to where the document wrote it, so located diagnostics stay true."""

    moved: dict[Path_, Path_] = field(default_factory=dict)

    def locate(self, path: Path_) -> Location:
        """The position of ``path`` in the text as written (see :class:`DocumentFile`)."""
        for length in range(len(path), 0, -1):
            written = self.moved.get(path[:length])
            if written is not None:
                path = (*written, *path[length:])
                break
        return DocumentFile.locate(self, path)


def prefer_https(root: DocumentFile) -> tuple[DocumentFile, tuple[str, ...]]:
    """``root`` with its servers in the order the import prefers, and one note per change
    (for the import's summary); ``root`` itself when nothing changes."""
    data = root.data
    if not isinstance(data, Mapping):
        return root, ()
    notes: list[str] = []
    moved: dict[Path_, Path_] = {}
    chosen = dict(data)
    _choose(chosen, (), notes, moved)
    paths = data.get("paths")
    own = 0  # operations with servers of their own
    if isinstance(paths, Mapping):
        new_paths = dict(paths)
        for path, item in paths.items():
            if not isinstance(item, Mapping):
                continue
            new_item = dict(item)
            changed = _choose(new_item, ("paths", path), notes, moved)
            for method in _METHODS:
                operation = item.get(method)
                if not isinstance(operation, Mapping):
                    continue
                own += _has_own(operation, item, chosen)
                if "servers" in operation:
                    new_operation = dict(operation)
                    if _choose(new_operation, ("paths", path, method), notes, moved):
                        new_item[method] = new_operation
                        changed = True
            if changed:
                new_paths[path] = new_item
        chosen["paths"] = new_paths
    if own:
        notes.append(f"{own} operation(s) of the document list servers of their own (the "
                     "operation's or its path's `servers`): each is sent there, https "
                     "preferred, and its file says so")
    if not notes:
        return root, ()
    return (ServersChosen(root.shown, root.real, root.text, chosen, root.sha256,
                          _block=root._block, moved=moved), tuple(dict.fromkeys(notes)))


def _choose(holder: dict[str, Any], where: Path_, notes: list[str],
            moved: dict[Path_, Path_]) -> bool:
    """Reorder ``holder["servers"]`` in place (a new list); whether anything changed."""
    servers = holder.get("servers")
    if not isinstance(servers, list) or not servers:
        return False
    entries = list(servers)
    changed = False
    for index, entry in enumerate(entries):
        url = entry.get("url") if isinstance(entry, Mapping) else None
        if isinstance(url, str) and url.startswith("//"):
            entries[index] = {**entry, "url": f"https:{url}"}
            if index == 0:
                notes.append(f"server {_shown(url)} has no scheme (protocol-relative): "
                             f"read as https:{_shown(url)}")
            changed = True
    first = next((index for index, entry in enumerate(entries) if _is_https(entry)), None)
    if first is not None and first > 0:
        notes.append(f"server {_shown(_url(entries[first]))} chosen: https, listed after "
                     f"{_shown(_url(entries[0]))}")
        entries.insert(0, entries.pop(first))
        prefix = (*where, "servers")
        moved[(*prefix, 0)] = (*prefix, first)
        for index in range(1, first + 1):
            moved[(*prefix, index)] = (*prefix, index - 1)
        changed = True
    if changed:
        holder["servers"] = entries
    return changed


def _has_own(operation: Mapping[str, Any], item: Mapping[str, Any],
             document: Mapping[str, Any]) -> bool:
    """Whether the operation's first server (its own, else its path's) is not the
    document's (a list that only repeats the document's, as Twilio's do, is not)."""
    for holder in (operation, item):
        servers = holder.get("servers")
        if isinstance(servers, list) and servers:
            first = next((entry for entry in servers if _is_https(entry)), servers[0])
            return _url(first).removeprefix("https:") != _document_url(document)
    return False


def _document_url(document: Mapping[str, Any]) -> str:
    servers = document.get("servers")
    return _url(servers[0]).removeprefix("https:") if isinstance(servers, list) and servers \
        else ""


def _url(entry: Any) -> str:
    url = entry.get("url") if isinstance(entry, Mapping) else None
    return url if isinstance(url, str) else "?"


def _is_https(entry: Any) -> bool:
    try:
        return urlsplit(_url(entry)).scheme.lower() == "https"
    except ValueError:
        return False


def _shown(url: str) -> str:
    """A document's url as a summary line may print it (bounded, controls escaped)."""
    return escape_control(url[:200] + ("..." if len(url) > 200 else ""))


def checked_server(server: str | None) -> str | None:
    """``--server`` (given or recorded) when it is an absolute http(s) URL a header comment
    can hold (visible characters, no space), else a usage refusal; None stays None."""
    if server is None:
        return None
    try:
        parts = urlsplit(server)
        absolute = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        absolute = False
    if absolute and server.isprintable() and " " not in server \
            and len(server) <= MAX_SERVER_CHARS:
        return server
    raise ImportRefused((Diagnostic.error(
        Location("--server"), OPENAPI_SERVER,
        f"{_shown(server)!r} is not an absolute http(s) URL without spaces or control "
        "characters"),), ExitCode.USAGE)


def with_recorded_server(text: str, server: str | None) -> str:
    """A generated file's ``text`` with ``--server`` recorded in its header (unchanged
    without one)."""
    if server is None:
        return text
    start = text.find(_RECORD_AFTER)
    end = text.find("\n", start) + 1 if start >= 0 else 0
    return text[:end] + header_record(RECORD_PREFIX, server, _RECORD_TAIL) + text[end:]


def recorded_server(existing: GeneratedFiles) -> str | None:
    """The ``--server`` the generated files record (None: none does); files that record
    different ones are refused: pass ``--server`` to say which."""
    found: dict[str, str] = {}
    for path, text in existing.texts.items():
        for url in header_records(text, RECORD_PREFIX, _RECORD_TAIL):
            found.setdefault(url, path)
    if len(found) > 1:
        shown = ", ".join(f"{_shown(url)} ({path})" for url, path in sorted(found.items())[:3])
        raise ImportRefused((Diagnostic.error(
            Location(next(iter(sorted(found.values())))), OPENAPI_SERVER,
            f"the generated files record different servers: {shown}; pass --server URL"),),
            ExitCode.USAGE)
    return checked_server(next(iter(found), None))


def server_lines(server: str | None, notes: tuple[str, ...]) -> tuple[str, ...]:
    """What the import's summary says of the server it used."""
    if server is not None:
        return (f"server: {_shown(server)} (--server, recorded in the files: --check "
                "needs no flag)",)
    return tuple(f"server: {note}" for note in notes)
