"""Strict YAML: libyaml's parser, our own resolver and a converter that records positions.

PyYAML's defaults are YAML 1.1: ``no`` is False, ``0777`` is 511, ``1:30`` is 90 and a
repeated key silently wins. A capability file is reviewed by people who read it as
YAML 1.2 (or as plain text), so every construct whose meaning differs is an error here,
and so are the constructs that only serve attacks (merge keys, alias bombs, custom tags).

Positions are kept as a flat map from a node's path to its (line, column), not as node
trees: the map is all a diagnostic needs, and whole node trees cost memory and GC time.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from compiler.source.characters import (
    CONTROL_CHARACTERS,
    IDENTIFIER_KEYS,
    INVISIBLE_CHARACTERS,
    control_message,
)
from compiler.source.safe_read import MAX_SOURCE_BYTES

try:  # libyaml when present: several times faster than the pure-Python parser
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]

    HAVE_LIBYAML = True
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser, Composer):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)

    HAVE_LIBYAML = False

Path = tuple[str | int, ...]

MAX_FILE_BYTES = MAX_SOURCE_BYTES
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_EXPANDED_NODES = 100_000
MAX_INTEGER_DIGITS = 64

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
MERGE_TAG = "tag:yaml.org,2002:merge"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
AMBIGUOUS_BOOL_TAG = "tag:capc,2024:yaml11-bool"
AMBIGUOUS_OCTAL_TAG = "tag:capc,2024:yaml11-octal"
AMBIGUOUS_SEXAGESIMAL_TAG = "tag:capc,2024:yaml11-sexagesimal"

_HAZARD_MESSAGES = {
    AMBIGUOUS_BOOL_TAG: (
        "yaml-ambiguous-bool",
        "{value!r} is a boolean in YAML 1.1 but a string in YAML 1.2; "
        "write true/false for a boolean or quote it ('{value}') for a string",
    ),
    AMBIGUOUS_OCTAL_TAG: (
        "yaml-ambiguous-number",
        "{value!r} is octal in YAML 1.1 but decimal in YAML 1.2; "
        "quote it for a string, drop the leading zero, or write 0o… for octal",
    ),
    AMBIGUOUS_SEXAGESIMAL_TAG: (
        "yaml-ambiguous-number",
        "{value!r} is a base-60 number in YAML 1.1; quote it ('{value}') for a string",
    ),
}


class StrictResolver(BaseResolver):
    """YAML 1.2 core-schema scalars, plus markers for the YAML 1.1 forms we refuse."""


def _implicit(tag: str, pattern: str, first: str) -> None:
    StrictResolver.add_implicit_resolver(tag, re.compile(pattern, re.X), list(first))


# The YAML 1.1 forms first: the first matching resolver wins.
_implicit(
    AMBIGUOUS_BOOL_TAG,
    r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$",
    "yYnNoO",
)
_implicit(AMBIGUOUS_OCTAL_TAG, r"^[-+]?0[0-9_]+$", "-+0")
_implicit(
    AMBIGUOUS_SEXAGESIMAL_TAG,
    r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$",
    "-+0123456789",
)
_implicit(BOOL_TAG, r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
_implicit(NULL_TAG, r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""])  # type: ignore[arg-type]
_implicit(INT_TAG, r"^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+|0o[0-7]+)$", "-+0123456789")
_implicit(
    FLOAT_TAG,
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
    "-+0123456789.",
)
_implicit(MERGE_TAG, r"^(?:<<)$", "<")



# A plain scalar's tag depends on its text alone, and a tree repeats the same few texts
# (keys, types, booleans): the compose step calls resolve for every node, so remembering
# the answer saves the regular expressions. Bounded: short texts, a fixed number of them.
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_LIMIT = 20_000
_PLAIN_TAG_TEXT_LIMIT = 64
_DEFAULT_TAGS = {ScalarNode: STR_TAG, SequenceNode: SEQ_TAG, MappingNode: MAP_TAG}


class _StrictParser(_Parser, StrictResolver):
    """libyaml's parser and composer with our resolver; no constructor (we convert)."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        StrictResolver.__init__(self)

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        """BaseResolver.resolve's answer, remembered for short plain scalars.

        Quoted scalars are strings and collections take their kind's tag: with no path
        resolvers registered, that is what BaseResolver answers too.
        """
        if kind is not ScalarNode or not implicit[0]:
            return _DEFAULT_TAGS[kind]
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = BaseResolver.resolve(self, kind, value, implicit)  # type: ignore[no-untyped-call]
            if len(value) <= _PLAIN_TAG_TEXT_LIMIT and len(_PLAIN_TAGS) < _PLAIN_TAGS_LIMIT:
                _PLAIN_TAGS[value] = tag
        return tag

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers are registered: nothing to track per level."""

    def ascend_resolver(self) -> None:
        """No path resolvers are registered: nothing to track per level."""


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """A located loading problem, before it becomes a Diagnostic (1-based line/col)."""

    line: int
    col: int
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class PositionMap:
    """Where each value (and each mapping key) of one document starts, 1-based."""

    values: dict[Path, tuple[int, int]]
    keys: dict[Path, tuple[int, int]]

    def locate(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """Position of ``path`` (its key when ``key``), else of its nearest located ancestor."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            found = table.get(probe) or self.values.get(probe)
            if found:
                return found
            probe = probe[:-1]
        return self.values.get((), (1, 1))


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """One YAML document: its data, where each node is, and its first line."""

    index: int
    data: Any
    positions: PositionMap
    line: int


# What a node's text starts with when it carries properties: an anchor or a tag. Callers
# test this one character before calling explicit_tag (most nodes carry neither).
_PROPERTY_STARTS = ("!", "&")


@dataclass(slots=True)
class _Converter:
    """Turns a composed node tree into plain data, checking what libyaml lets through."""

    problems: list[YamlProblem]
    text: str = ""
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    converted: dict[int, Any] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)
    in_progress: set[int] = field(default_factory=set)
    aliases: int = 0
    expanded: int = 0

    def problem(self, node: Node, code: str, message: str) -> None:
        mark = node.start_mark
        self.problems.append(YamlProblem(mark.line + 1, mark.column + 1, code, message))

    def explicit_tag(self, node: Node) -> str | None:
        """The tag written on ``node`` (``!``, ``!!int``, ``!local``...), None when untagged.

        libyaml does not say whether a tag was written or resolved, and it resolves the
        non-specific ``!`` like no tag at all (``! 12`` would be an int); the source text
        does say: a node's text starts with its properties (``&anchor``, then ``!tag``).
        """
        start = node.start_mark.index
        if self.text[start:start + 1] not in _PROPERTY_STARTS:  # the common case
            return None
        head = self.text[start:start + 1024]
        if head.startswith("&"):
            head = head.split(None, 1)[1] if len(head.split(None, 1)) > 1 else ""
        if not head.startswith("!"):
            return None
        return head.split(None, 1)[0] if head.split(None, 1) else head

    def tag_problem(self, node: Node, written: str, code: str = "yaml-tag") -> None:
        self.problem(node, code,
                     f"explicit tag {written!r} is not supported: write the value without a "
                     "tag (quote it, or use !!str, for a string); tags change what a value "
                     "means without a reviewer seeing it")

    def convert(self, node: Node, path: Path, depth: int) -> Any:
        node_id = id(node)
        if node_id in self.in_progress:
            self.problem(node, "yaml-recursive-alias", "an alias refers to its own ancestor")
            return None
        if node_id in self.converted:
            return self._reuse_alias(node, node_id)
        if depth > MAX_DEPTH:
            self.problem(node, "yaml-too-deep", f"nesting deeper than {MAX_DEPTH} levels")
            return None
        mark = node.start_mark
        self.values[path] = (mark.line + 1, mark.column + 1)
        if isinstance(node, ScalarNode):
            # A leaf: never an ancestor of an alias and of size 1 (see _reuse_alias), so
            # it skips the in-progress set and the size table; most nodes are leaves.
            value: Any = self._scalar(node)
            self.expanded += 1
            self.converted[node_id] = value
            return value
        self.in_progress.add(node_id)
        before = self.expanded
        if isinstance(node, MappingNode):
            value = self._mapping(node, path, depth)
        elif isinstance(node, SequenceNode):
            value = self._sequence(node, path, depth)
        else:  # pragma: no cover - the composer makes only the three node kinds
            value = None
        self.in_progress.discard(node_id)
        self.expanded += 1
        self.converted[node_id] = value
        self.sizes[node_id] = self.expanded - before
        return value

    def _reuse_alias(self, node: Node, node_id: int) -> Any:
        self.aliases += 1
        self.expanded += self.sizes.get(node_id, 1)  # a scalar has no entry: size 1
        if self.aliases > MAX_ALIASES:
            if self.aliases == MAX_ALIASES + 1:
                self.problem(node, "yaml-alias-limit", f"more than {MAX_ALIASES} aliases")
            return None
        if self.expanded > MAX_EXPANDED_NODES:
            self.problem(
                node,
                "yaml-alias-bomb",
                f"aliases expand this document past {MAX_EXPANDED_NODES} nodes",
            )
            self.aliases = MAX_ALIASES + 1  # report once, stop expanding
            return None
        # A copy, so later stages may treat every value as owned.
        return copy.deepcopy(self.converted[node_id])

    def _mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        if node.tag != MAP_TAG:
            self.problem(node, "yaml-tag", f"unsupported tag {node.tag!r}")
        result: dict[str, Any] = {}
        text = self.text
        for key_node, value_node in node.value:
            start = key_node.start_mark.index
            written = (self.explicit_tag(key_node)
                       if text[start:start + 1] in _PROPERTY_STARTS
                       and isinstance(key_node, ScalarNode) else None)
            if written == "!":  # non-specific: a string (YAML 1.2)
                key_node.tag = STR_TAG
            elif written is not None and key_node.tag != STR_TAG:
                self.tag_problem(key_node, written)
                continue
            if key_node.tag == MERGE_TAG:
                self.problem(key_node, "yaml-merge-key", "merge keys (<<) are not supported")
                continue
            if not isinstance(key_node, ScalarNode) or key_node.tag != STR_TAG:
                if key_node.tag in _HAZARD_MESSAGES:
                    self._scalar(key_node)
                elif key_node.tag.startswith("tag:yaml.org,2002:"):
                    self.problem(key_node, "yaml-key-type", "mapping keys must be strings")
                    continue
                else:
                    self.problem(key_node, "yaml-tag", f"unsupported key {key_node.tag!r}")
                    continue
            key = str(key_node.value)
            invisible = INVISIBLE_CHARACTERS.search(key)
            if invisible:
                self.problem(key_node, "invisible-character",
                             f"key {key!r} holds the invisible character "
                             f"U+{ord(invisible.group()):04X}: it would not read as it looks")
                continue
            if key in result:
                first = self.keys.get((*path, key))
                where = f" (first at line {first[0]})" if first else ""
                self.problem(key_node, "yaml-duplicate-key", f"duplicate key {key!r}{where}")
                continue
            self.keys[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = value = self.convert(value_node, (*path, key), depth + 1)
            if key in IDENTIFIER_KEYS:
                self._check_identifier(value_node, key, value)
        return result

    def _check_identifier(self, node: Node, key: str, value: Any) -> None:
        """Codes, tool names and labels: no invisible character may hide in them."""
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            found = INVISIBLE_CHARACTERS.search(text) if isinstance(text, str) else None
            if found:
                self.problem(node, "invisible-character",
                             f"{key} {text!r} holds the invisible character "
                             f"U+{ord(found.group()):04X}: it would not read as it looks")
                return

    def _sequence(self, node: SequenceNode, path: Path, depth: int) -> list[Any]:
        if node.tag != SEQ_TAG:
            self.problem(node, "yaml-tag", f"unsupported tag {node.tag!r}")
        return [self.convert(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]

    def _scalar(self, node: Node) -> Any:
        tag, text = node.tag, node.value
        start = node.start_mark.index
        written = (self.explicit_tag(node) if self.text[start:start + 1] in _PROPERTY_STARTS
                   else None)
        if written == "!":  # the non-specific tag: a string, as YAML 1.2 reads it
            return text
        if written is not None and tag != STR_TAG:
            self.tag_problem(node, written)
            return text
        if tag == STR_TAG:
            return text
        if tag == INT_TAG:
            if len(text) > MAX_INTEGER_DIGITS:
                self.problem(node, "yaml-number-too-large",
                             f"an integer of {len(text)} digits is refused (at most "
                             f"{MAX_INTEGER_DIGITS}): no capability needs one")
                return 0
            return int(text, 0) if text[:2] in ("0x", "0o") else int(text)
        if tag == FLOAT_TAG:
            value = _float(text)
            if value != value or value in (float("inf"), float("-inf")):
                self.problem(node, "yaml-non-finite",
                             f"{text!r} is not a finite number: JSON (and the manifest) "
                             "cannot hold NaN or infinity")
            return value
        if tag == BOOL_TAG:
            return text.lower() == "true"
        if tag == NULL_TAG:
            return None
        hazard = _HAZARD_MESSAGES.get(tag)
        if hazard:
            self.problem(node, hazard[0], hazard[1].format(value=text))
            return text
        self.problem(node, "yaml-tag", f"unsupported tag {tag!r}")
        return text


def _float(text: str) -> float:
    lowered = text.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if lowered.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)


def decode_source(raw: bytes, limit: int = MAX_FILE_BYTES) -> tuple[str | None, YamlProblem | None]:
    """Bytes → text, refusing oversized files, non-UTF-8 bytes and control characters."""
    if len(raw) > limit:
        return None, YamlProblem(
            1, 1, "file-too-large", f"file is larger than the limit of {limit} bytes"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line, col = _line_col(raw[: error.start].decode("utf-8", "replace"), error.start)
        return None, YamlProblem(
            line, col, "encoding", f"invalid UTF-8 byte 0x{raw[error.start]:02x}; save as UTF-8"
        )
    text = text.removeprefix("\ufeff")
    match = CONTROL_CHARACTERS.search(text)
    if match:
        line, col = _line_col(text, match.start())
        return None, YamlProblem(line, col, "control-character", control_message(match.group()))
    return text, None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    line = before.count("\n") + 1
    return line, offset - (before.rfind("\n") + 1) + 1


def load_documents(text: str) -> tuple[list[LoadedDocument], list[YamlProblem]]:
    """Parse every document of ``text``; problems are collected, never raised."""
    problems: list[YamlProblem] = []
    documents: list[LoadedDocument] = []
    parser = _StrictParser(text)
    try:
        index = 0
        while parser.check_node():
            node = parser.get_node()
            if node is None:
                continue
            converter = _Converter(problems, text)
            data = converter.convert(node, (), 0)
            positions = PositionMap(converter.values, converter.keys)
            documents.append(LoadedDocument(index, data, positions, node.start_mark.line + 1))
            index += 1
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = _yaml_message(error)
        if _tab_at(text, line, col):
            message += " (YAML does not allow tabs for indentation; use spaces)"
        problems.append(YamlProblem(line, col, "yaml-syntax", message))
    except yaml.YAMLError as error:  # reader errors carry no mark
        problems.append(YamlProblem(1, 1, "yaml-syntax", str(error).splitlines()[0]))
    except RecursionError:
        problems.append(YamlProblem(1, 1, "yaml-too-deep", "nesting too deep to parse"))
    finally:
        parser.dispose()
    return documents, problems


def _yaml_message(error: yaml.MarkedYAMLError) -> str:
    parts = [part for part in (error.context, error.problem) if part]
    return "; ".join(parts) or "invalid YAML"


def _tab_at(text: str, line: int, col: int) -> bool:
    lines = text.splitlines()
    return 0 < line <= len(lines) and "\t" in lines[line - 1][: max(col, 1)]
