"""Reading one OpenAPI file: bytes → data with string keys, and positions found on demand.

OpenAPI documents are written for YAML 1.2 (or are JSON): response codes like ``200:``
are keys, and must read as the string ``"200"``, not an integer; ``yes`` is a string.
PyYAML's defaults (YAML 1.1, integer keys) get both wrong, so YAML goes through capc's
strict resolver and a converter here that stringifies keys and bounds aliases. JSON, the
usual form of large documents, goes through the json module. Block-style YAML, the usual
form of the others, is first read in one pass (``block_yaml.py``: the same data, and each
value's position kept per container); a YAML text outside that subset is composed and
converted. Positions are otherwise not kept for every node (a 10 MB document has
millions): when a problem must be located, such a YAML text is composed once and the node
at the problem's path is found by walking the node tree; a JSON text is indexed one object
or array at a time, only along the paths asked for (composing Microsoft Graph's 20 MB as
YAML nodes took a minute and a gigabyte).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from compiler.authoring.openapi.block_scalars import OutsideTheSubset, scalar_value
from compiler.authoring.openapi.block_yaml import BlockPositions, read_block_yaml
from compiler.authoring.openapi.problems import ImportRefused
from compiler.diagnostics import Code, Diagnostic, Location
from compiler.errors import ExitCode
from compiler.source.yaml_loader import StrictResolver
from compiler.source.yaml_resolver import ComposingParser

OPENAPI_EMPTY = Code("openapi-empty", "the OpenAPI document is empty")
OPENAPI_ENCODING = Code("openapi-encoding", "the OpenAPI document is not valid UTF-8")
OPENAPI_READ = Code("openapi-read", "the OpenAPI document cannot be read")
OPENAPI_SYNTAX = Code("openapi-syntax", "the OpenAPI document is not valid YAML or JSON")
OPENAPI_TOO_DEEP = Code("openapi-too-deep", "the OpenAPI document nests too deeply")
OPENAPI_TOO_LARGE = Code("openapi-too-large", "the OpenAPI document or an operation is too large")
OPENAPI_YAML = Code("openapi-yaml", "the OpenAPI document uses YAML capc refuses (aliases, keys)")
CODES = (
    OPENAPI_EMPTY, OPENAPI_ENCODING, OPENAPI_READ, OPENAPI_SYNTAX, OPENAPI_TOO_DEEP,
    OPENAPI_TOO_LARGE, OPENAPI_YAML,
)

# Stripe's and GitHub's documents are 10-20 MB; a document past this is refused unread.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_NESTING = 256
# Aliases may share a node, never multiply a document past this many nodes.
MAX_ALIAS_EXPANSION = 200_000

Path_ = tuple[str | int, ...]


class _Composer(ComposingParser, StrictResolver):
    """libyaml's parser with capc's YAML 1.2 resolver; the node tree is converted here."""

    def __init__(self, stream: str) -> None:
        ComposingParser.__init__(self, stream)
        StrictResolver.__init__(self)


def _compose(text: str) -> Node | None:
    parser = _Composer(text)
    try:
        node: Node | None = parser.get_single_node()
        return node
    finally:
        parser.dispose()


@dataclass(slots=True)
class _Converter:
    """Node tree → plain data with string keys; aliases bounded; nesting bounded."""

    shown: str
    converted: dict[int, Any] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)
    in_progress: set[int] = field(default_factory=set)
    expanded: int = 0
    aliased: int = 0

    def refuse(self, node: Node, code: Code, message: str) -> ImportRefused:
        mark = node.start_mark
        where = Location(self.shown, mark.line + 1, mark.column + 1)
        return ImportRefused((Diagnostic.error(where, code, message),))

    def convert(self, node: Node, depth: int) -> Any:
        node_id = id(node)
        if node_id in self.in_progress:
            raise self.refuse(node, OPENAPI_YAML, "an alias refers to its own ancestor")
        if node_id in self.converted:  # an alias: shared, and counted as what it expands to
            self.aliased += self.sizes[node_id]
            if self.aliased > MAX_ALIAS_EXPANSION:
                raise self.refuse(node, OPENAPI_YAML,
                                  f"aliases expand this document past {MAX_ALIAS_EXPANSION} "
                                  "nodes (an alias bomb?)")
            return self.converted[node_id]
        if depth > MAX_NESTING:
            raise self.refuse(node, OPENAPI_TOO_DEEP, f"nesting deeper than {MAX_NESTING}")
        self.in_progress.add(node_id)
        before = self.expanded + self.aliased
        value: Any
        if isinstance(node, MappingNode):
            value = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise self.refuse(key_node, OPENAPI_YAML, "a mapping key must be a scalar")
                key = str(key_node.value)  # 200: and "200": are the same response code
                if key in value:
                    raise self.refuse(key_node, OPENAPI_YAML, f"duplicate key {key!r}")
                value[key] = self.convert(value_node, depth + 1)
        elif isinstance(node, SequenceNode):
            value = [self.convert(item, depth + 1) for item in node.value]
        else:
            value = _scalar(node)
        self.in_progress.discard(node_id)
        self.expanded += 1
        self.converted[node_id] = value
        self.sizes[node_id] = self.expanded + self.aliased - before
        return value


def _scalar(node: Node) -> Any:
    # Strings, and YAML 1.1 forms (yes, 0777, 1:30) read as YAML 1.2 strings.
    return scalar_value(node.tag, node.value)


@dataclass(slots=True)
class DocumentFile:
    """One file of the document (the root, or a file a ``$ref`` points into)."""

    shown: str  # the path as diagnostics print it
    real: Path  # resolved, for confinement checks
    text: str
    data: Any
    sha256: str
    _tree: Node | None = None
    _json: _JsonPositions | None = None
    # Kept by the one-pass read of a YAML text: positions in the text, so a copy of the file
    # with other data (reordered servers, Swagger 2.0 converted) keeps them too.
    _block: BlockPositions | None = field(default=None, repr=False)

    def locate(self, path: Path_) -> Location:
        """The position of the node at ``path``, else of its nearest ancestor (lazy)."""
        if self._block is not None:
            line, col = self._block.locate(path)
            return Location(self.shown, line, col)
        if self._json is None and self._tree is None and self.text.lstrip()[:1] in ("{", "["):
            self._json = _JsonPositions(self.text)
        if self._json is not None:
            try:
                line, col = self._json.locate(path)
                return Location(self.shown, line, col)
            except (ValueError, RecursionError):
                self._json = None  # not plain JSON after all: composed as YAML below
        if self._tree is None:
            try:
                self._tree = _compose(self.text)
            except (yaml.YAMLError, RecursionError):
                return Location(self.shown)
        node = self._tree
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        if node is None:
            return Location(self.shown)
        return Location(self.shown, node.start_mark.line + 1, node.start_mark.column + 1)

    def error(self, path: Path_, code: Code, message: str) -> Diagnostic:
        """A located error at ``path`` of this file."""
        return Diagnostic.error(self.locate(path), code, message)

    def warning(self, path: Path_, code: Code, message: str) -> Diagnostic:
        """A located warning at ``path`` of this file."""
        return Diagnostic.warning(self.locate(path), code, message)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The line breaks libyaml counts (a JSON text holds the last three only inside strings).
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


class _JsonPositions:
    """Where each value of a JSON text starts, as the composed YAML node would say (line
    and column from 1), found by reading one container's members at a time (the json
    module's scanner steps over each member's value) and kept for the next lookup."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.decoder = json.JSONDecoder()
        self.members: dict[int, dict[str, int] | list[int]] = {}
        self.line_starts: list[int] | None = None

    def locate(self, path: Path_) -> tuple[int, int]:
        """Line and column of the value at ``path``, else of its nearest ancestor; a
        ValueError when the text is not plain JSON where it is read."""
        offset = self._skip(0)
        for part in path:
            members = self._members(offset)
            child = (members.get(str(part)) if isinstance(members, dict) else
                     members[part] if isinstance(part, int) and 0 <= part < len(members)
                     else None)
            if child is None:
                break
            offset = child
        if self.line_starts is None:
            self.line_starts = [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def _skip(self, offset: int) -> int:
        match = _WHITESPACE.match(self.text, offset)
        return match.end() if match else offset

    def _members(self, offset: int) -> dict[str, int] | list[int]:
        known = self.members.get(offset)
        if known is not None:
            return known
        text, opening = self.text, self.text[offset:offset + 1]
        members: dict[str, int] | list[int] = {} if opening == "{" else []
        if opening in ("{", "["):
            closing = "}" if opening == "{" else "]"
            position = self._skip(offset + 1)
            while text[position:position + 1] != closing:
                key = ""
                if isinstance(members, dict):
                    key, position = self.decoder.raw_decode(text, position)
                    position = self._skip(position)
                    if text[position:position + 1] != ":":
                        raise ValueError("':' expected")
                    position = self._skip(position + 1)
                if isinstance(members, dict):
                    members.setdefault(str(key), position)  # the first, as YAML's walk
                else:
                    members.append(position)
                _, position = self.decoder.raw_decode(text, position)
                position = self._skip(position)
                if text[position:position + 1] == ",":
                    position = self._skip(position + 1)
                elif text[position:position + 1] != closing:
                    raise ValueError("',' expected")
        self.members[offset] = members
        return members


def _child(node: Node | None, part: str | int) -> Node | None:
    if isinstance(node, MappingNode):
        return next((value for key, value in node.value
                     if isinstance(key, ScalarNode) and key.value == str(part)), None)
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        child: Node = node.value[part]
        return child
    return None


def read_document_file(real: Path, shown: str) -> DocumentFile:
    """Read and parse one file; every failure is an :class:`ImportRefused` at a location."""
    def refuse(code: Code, message: str, line: int = 1, col: int = 1,
               exit_code: int = ExitCode.PROBLEMS) -> ImportRefused:
        return ImportRefused((Diagnostic.error(Location(shown, line, col), code, message),),
                             exit_code)

    try:
        raw = _read_regular_file(real, refuse)
    except IsADirectoryError:
        raise refuse(OPENAPI_READ, "not a regular file (a folder): refused unread",
                     exit_code=ExitCode.USAGE) from None
    except OSError as error:
        raise refuse(OPENAPI_READ, f"cannot read: {error.strerror or error}",
                     exit_code=ExitCode.USAGE) from None
    if len(raw) > MAX_DOCUMENT_BYTES:  # it grew between stat and read
        raise refuse(OPENAPI_TOO_LARGE, f"the document is over {MAX_DOCUMENT_BYTES} bytes")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise refuse(OPENAPI_ENCODING,
                     f"invalid UTF-8 byte at offset {error.start}; save it as UTF-8") from None
    data, positions = _parse(text, shown, refuse)
    return DocumentFile(shown, real, text, data, hashlib.sha256(raw).hexdigest(),
                        _block=positions)


def _read_regular_file(real: Path, refuse: Any) -> bytes:
    """The bytes of ``real`` if it is a regular file of at most MAX_DOCUMENT_BYTES.

    Opened without blocking and checked on the open descriptor, so a FIFO or a device
    (``$ref: fifo.yaml`` beside the document) is refused at once, never read from; and a
    file swapped for one between a check and the open is still refused.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(real, flags)
    with os.fdopen(descriptor, "rb") as opened:
        status = os.fstat(opened.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise refuse(OPENAPI_READ, "not a regular file (a FIFO, device or folder): "
                         "refused unread", exit_code=ExitCode.USAGE)
        if status.st_size > MAX_DOCUMENT_BYTES:
            raise refuse(OPENAPI_TOO_LARGE,
                         f"the document is {status.st_size} bytes, over the limit of "
                         f"{MAX_DOCUMENT_BYTES}: split it, or import from a smaller copy")
        return opened.read(MAX_DOCUMENT_BYTES + 1)


def _parse(text: str, shown: str, refuse: Any) -> tuple[Any, BlockPositions | None]:
    """The data of a text, and the positions of a YAML text read in one pass.

    Block-style YAML is read in one pass when it can be (block_yaml.py), else composed.
    Proven equal by
    tests/authoring/openapi/test_openapi_block_yaml.py::test_each_case_read_as_composed_or_given_up
    """
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text), None
        except json.JSONDecodeError as error:
            raise refuse(OPENAPI_SYNTAX, f"invalid JSON: {error.msg}",
                         error.lineno, error.colno) from None
        except RecursionError:
            raise refuse(OPENAPI_TOO_DEEP, "nesting too deep to parse") from None
    try:
        read = read_block_yaml(text)
    except OutsideTheSubset:
        pass  # read the general way, which reports what it finds
    else:
        return read.data, read.positions
    return _composed_data(text, shown, refuse), None


def _composed_data(text: str, shown: str, refuse: Any) -> Any:
    """The general path: libyaml's node tree through the strict resolver, converted."""
    try:
        node = _compose(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        parts = [part for part in (error.context, error.problem) if part]
        raise refuse(OPENAPI_SYNTAX, "invalid YAML: " + ("; ".join(parts) or "syntax"),
                     mark.line + 1 if mark else 1, mark.column + 1 if mark else 1) from None
    except yaml.YAMLError as error:
        raise refuse(OPENAPI_SYNTAX, f"invalid YAML: {str(error).splitlines()[0]}") from None
    except RecursionError:
        raise refuse(OPENAPI_TOO_DEEP, "nesting too deep to parse") from None
    if node is None:
        raise refuse(OPENAPI_EMPTY, "the document is empty")
    return _Converter(shown).convert(node, 0)
