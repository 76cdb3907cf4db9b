"""A composed YAML node tree -> plain data, checking what libyaml lets through.

The converter of the strict loader (``compiler.source.yaml_loader``, whose docstring says
which YAML 1.1 constructs are refused and why): tags, duplicate and non-string keys, merge
keys, alias limits, depth, numbers, invisible characters. It records each node's position
in a flat table as it goes.
"""

from __future__ import annotations

import copy
import re
from dataclasses import field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from compiler.diagnostics import Code
from compiler.runtime.records import record
from compiler.source.characters import IDENTIFIER_KEYS, INVISIBLE_CHARACTERS
from compiler.source.yaml_resolver import (
    BOOL_TAG,
    FLOAT_TAG,
    HAZARD_MESSAGES,
    INT_TAG,
    MAP_TAG,
    MERGE_TAG,
    NULL_TAG,
    SEQ_TAG,
    STR_TAG,
)

INVISIBLE_CHARACTER = Code("invisible-character", "a key or value holds an invisible character")
YAML_ALIAS_BOMB = Code("yaml-alias-bomb", "aliases expand the document past the limit")
YAML_ALIAS_LIMIT = Code("yaml-alias-limit", "a document has too many aliases")
YAML_DUPLICATE_KEY = Code("yaml-duplicate-key", "a mapping has a key twice")
YAML_KEY_TYPE = Code("yaml-key-type", "a mapping key is not a string")
YAML_MERGE_KEY = Code("yaml-merge-key", "a merge key (<<)")
YAML_NON_FINITE = Code("yaml-non-finite", "a number is not finite")
YAML_NUMBER_TOO_LARGE = Code("yaml-number-too-large", "an integer has too many digits")
YAML_RECURSIVE_ALIAS = Code("yaml-recursive-alias", "an alias refers to its own ancestor")
YAML_TAG = Code("yaml-tag", "an unsupported YAML tag")
YAML_TOO_DEEP = Code("yaml-too-deep", "the document nests too deeply")
CODES = (
    INVISIBLE_CHARACTER, YAML_ALIAS_BOMB, YAML_ALIAS_LIMIT, YAML_DUPLICATE_KEY, YAML_KEY_TYPE,
    YAML_MERGE_KEY, YAML_NON_FINITE, YAML_NUMBER_TOO_LARGE, YAML_RECURSIVE_ALIAS, YAML_TAG,
    YAML_TOO_DEEP,
)

Path = tuple[str | int, ...]

MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_EXPANDED_NODES = 100_000
MAX_INTEGER_DIGITS = 64

@record(frozen=True, slots=True)
class YamlProblem:
    """A located loading problem, before it becomes a Diagnostic (1-based line/col)."""

    line: int
    col: int
    code: Code
    message: str


Position = tuple[int, ...]
"""Where one path's value starts, ``(line, col)``, 1-based; for a mapping entry
``(line, col, key_line, key_col)``, where line 0 means no value position (an alias or a
node too deep, which are not located themselves)."""


# What a node's text starts with when it carries properties: an anchor or a tag. Callers
# test this one character before calling explicit_tag (most nodes carry neither).
_PROPERTY_STARTS = ("!", "&")
# Where a property that a document keeps can start: at the start of the text, after blank
# space or a line break, or right after '[', '{', ',', or a flow '?' or ':'. Elsewhere
# ('R&D', '?a=1&b=2', '{to}&from', 'Hello!') the character is inside a scalar, a tag or a
# comment, or it follows a complete node, which libyaml refuses: that document is never
# converted.
_ANCHOR_START = re.compile(r"(?:^|(?<=[\s\[{,?:]))&")
_PROPERTY_START = re.compile(r"(?:^|(?<=[\s\[{,?:]))[&!]")
# The escapes that decode to a character of one's choice; the others (\n, \t, \_...)
# decode to characters that are not invisible.
_CHARACTER_ESCAPE = re.compile(r"\\[xuU]")


@record(slots=True)
class NodeConverter:
    """Turns a composed node tree into plain data, checking what libyaml lets through.

    Three facts about the whole text spare work on every node (``for_text`` sets them):
    without an anchor no alias exists (libyaml refuses an undefined one), so every node
    is reached once; without an anchor or a tag no node carries a property; without an
    invisible character or an escape that can make one (``"\\u200b"``) no key or value
    holds one. The general path assumes all three.
    """

    problems: list[YamlProblem]
    text: str = ""
    shared: bool = True  # an anchor may exist: nodes may be reached more than once
    properties: bool = True  # a node's text may start with a tag or an anchor
    hidden: bool = True  # a decoded key or value may hold an invisible character
    values: dict[Path, Position] = field(default_factory=dict)
    converted: dict[int, Any] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)
    in_progress: set[int] = field(default_factory=set)
    aliases: int = 0
    expanded: int = 0

    @classmethod
    def for_text(cls, problems: list[YamlProblem], text: str) -> NodeConverter:
        """A converter for the documents of ``text``, skipping what the text rules out.

        Proven equal by
        tests/source/test_converter_fast_paths.py::test_any_text_answers_as_the_general_path.
        """
        # The searches run only for a text holding the character; every invisible
        # character is outside ASCII, so an ASCII text needs no search for one.
        shared = "&" in text and _ANCHOR_START.search(text) is not None
        properties = ("&" in text or "!" in text) and _PROPERTY_START.search(text) is not None
        hidden = ("\\" in text and _CHARACTER_ESCAPE.search(text) is not None) or (
            not text.isascii() and INVISIBLE_CHARACTERS.search(text) is not None)
        return cls(problems, text, shared=shared, properties=properties, hidden=hidden)

    def problem(self, node: Node, code: Code, message: str) -> None:
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

    def tag_problem(self, node: Node, written: str, code: Code = YAML_TAG) -> None:
        self.problem(node, code,
                     f"explicit tag {written!r} is not supported: write the value without a "
                     "tag (quote it, or use !!str, for a string); tags change what a value "
                     "means without a reviewer seeing it")

    def convert(self, node: Node, path: Path, depth: int, key_at: Position = ()) -> Any:
        """``node`` as plain data; ``key_at`` is its mapping key's (line, col), if any."""
        if self.shared:
            return self._convert_shared(node, path, depth, key_at)
        if depth > MAX_DEPTH:
            return self._too_deep(node, path, key_at)
        mark = node.start_mark
        self.values[path] = ((mark.line + 1, mark.column + 1, key_at[0], key_at[1]) if key_at
                             else (mark.line + 1, mark.column + 1))
        if isinstance(node, ScalarNode):
            return self._scalar(node)
        return self._collection(node, path, depth)

    def _convert_shared(self, node: Node, path: Path, depth: int, key_at: Position) -> Any:
        # convert with aliases possible: each node's value is remembered for its aliases,
        # and each alias counts toward the alias and expansion limits.
        node_id = id(node)
        if node_id in self.in_progress:
            self._locate_key_only(path, key_at)
            self.problem(node, YAML_RECURSIVE_ALIAS, "an alias refers to its own ancestor")
            return None
        if node_id in self.converted:
            self._locate_key_only(path, key_at)
            return self._reuse_alias(node, node_id)
        if depth > MAX_DEPTH:
            return self._too_deep(node, path, key_at)
        mark = node.start_mark
        self.values[path] = ((mark.line + 1, mark.column + 1, key_at[0], key_at[1]) if key_at
                             else (mark.line + 1, mark.column + 1))
        if isinstance(node, ScalarNode):
            # A leaf: never an ancestor of an alias and of size 1 (see _reuse_alias), so
            # it skips the in-progress set and the size table; most nodes are leaves.
            value: Any = self._scalar(node)
            self.expanded += 1
            self.converted[node_id] = value
            return value
        self.in_progress.add(node_id)
        before = self.expanded
        value = self._collection(node, path, depth)
        self.in_progress.discard(node_id)
        self.expanded += 1
        self.converted[node_id] = value
        self.sizes[node_id] = self.expanded - before
        return value

    def _too_deep(self, node: Node, path: Path, key_at: Position) -> None:
        self._locate_key_only(path, key_at)
        self.problem(node, YAML_TOO_DEEP, f"nesting deeper than {MAX_DEPTH} levels")

    def _locate_key_only(self, path: Path, key_at: Position) -> None:
        # A node that is not located itself (an alias, a node too deep) still has its key.
        if key_at:
            self.values[path] = (0, 0, *key_at)

    def _reuse_alias(self, node: Node, node_id: int) -> Any:
        self.aliases += 1
        self.expanded += self.sizes.get(node_id, 1)  # a scalar has no entry: size 1
        if self.aliases > MAX_ALIASES:
            if self.aliases == MAX_ALIASES + 1:
                self.problem(node, YAML_ALIAS_LIMIT, f"more than {MAX_ALIASES} aliases")
            return None
        if self.expanded > MAX_EXPANDED_NODES:
            self.problem(
                node,
                YAML_ALIAS_BOMB,
                f"aliases expand this document past {MAX_EXPANDED_NODES} nodes",
            )
            self.aliases = MAX_ALIASES + 1  # report once, stop expanding
            return None
        # A copy, so later stages may treat every value as owned.
        return copy.deepcopy(self.converted[node_id])

    def _collection(self, node: Node, path: Path, depth: int) -> Any:
        if isinstance(node, MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, SequenceNode):
            return self._sequence(node, path, depth)
        return None  # pragma: no cover - the composer makes only the three node kinds

    def _mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        if node.tag != MAP_TAG:
            self.problem(node, YAML_TAG, f"unsupported tag {node.tag!r}")
        result: dict[str, Any] = {}
        values = self.values
        # A string key needs no second look when no node has properties and no invisible
        # character can be in it; a scalar value is converted here, without convert's
        # call, when no node is shared (nothing to remember) and it is within the bound.
        plain_keys = not self.properties and not self.hidden
        leaves = not self.shared and depth < MAX_DEPTH
        for key_node, value_node in node.value:
            if plain_keys and key_node.tag == STR_TAG and type(key_node) is ScalarNode:
                key = key_node.value
            else:
                key = self._key(key_node)
                if key is None:
                    continue
            # Concatenation: (*path, key) builds a list first, at three times the cost.
            child = path + (key,)  # noqa: RUF005
            if key in result:
                first = values.get(child)
                where = f" (first at line {first[2]})" if first else ""
                self.problem(key_node, YAML_DUPLICATE_KEY, f"duplicate key {key!r}{where}")
                continue
            key_mark = key_node.start_mark
            if leaves and type(value_node) is ScalarNode:
                mark = value_node.start_mark
                values[child] = (mark.line + 1, mark.column + 1,
                                 key_mark.line + 1, key_mark.column + 1)
                result[key] = value = self._scalar(value_node)
            else:
                result[key] = value = self.convert(value_node, child, depth + 1,
                                                   (key_mark.line + 1, key_mark.column + 1))
            if self.hidden and key in IDENTIFIER_KEYS:
                self._check_identifier(value_node, key, value)
        return result

    def _key(self, key_node: Node) -> str | None:
        """A mapping key's text, or None (reported) for a key that is refused."""
        text = self.text
        start = key_node.start_mark.index
        written = (self.explicit_tag(key_node)
                   if text[start:start + 1] in _PROPERTY_STARTS
                   and isinstance(key_node, ScalarNode) else None)
        if written == "!":  # non-specific: a string (YAML 1.2)
            key_node.tag = STR_TAG
        elif written is not None and key_node.tag != STR_TAG:
            self.tag_problem(key_node, written)
            return None
        if key_node.tag == MERGE_TAG:
            self.problem(key_node, YAML_MERGE_KEY, "merge keys (<<) are not supported")
            return None
        if not isinstance(key_node, ScalarNode) or key_node.tag != STR_TAG:
            if key_node.tag in HAZARD_MESSAGES:
                self._scalar(key_node)
            elif key_node.tag.startswith("tag:yaml.org,2002:"):
                self.problem(key_node, YAML_KEY_TYPE, "mapping keys must be strings")
                return None
            else:
                self.problem(key_node, YAML_TAG, f"unsupported key {key_node.tag!r}")
                return None
        key = str(key_node.value)
        invisible = INVISIBLE_CHARACTERS.search(key)
        if invisible:
            self.problem(key_node, INVISIBLE_CHARACTER,
                         f"key {key!r} holds the invisible character "
                         f"U+{ord(invisible.group()):04X}: it would not read as it looks")
            return None
        return key

    def _check_identifier(self, node: Node, key: str, value: Any) -> None:
        """Codes, tool names and labels: no invisible character may hide in them."""
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            found = INVISIBLE_CHARACTERS.search(text) if isinstance(text, str) else None
            if found:
                self.problem(node, INVISIBLE_CHARACTER,
                             f"{key} {text!r} holds the invisible character "
                             f"U+{ord(found.group()):04X}: it would not read as it looks")
                return

    def _sequence(self, node: SequenceNode, path: Path, depth: int) -> list[Any]:
        if node.tag != SEQ_TAG:
            self.problem(node, YAML_TAG, f"unsupported tag {node.tag!r}")
        result: list[Any] = []
        values = self.values
        leaves = not self.shared and depth < MAX_DEPTH  # as in _mapping
        for i, item in enumerate(node.value):
            child = path + (i,)  # noqa: RUF005 (see _mapping)
            if leaves and type(item) is ScalarNode:
                mark = item.start_mark
                values[child] = (mark.line + 1, mark.column + 1)
                result.append(self._scalar(item))
            else:
                result.append(self.convert(item, child, depth + 1))
        return result

    def _scalar(self, node: Node) -> Any:
        tag, text = node.tag, node.value
        if tag == STR_TAG and not self.properties:  # the common case: nothing to check
            return text
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
                self.problem(node, YAML_NUMBER_TOO_LARGE,
                             f"an integer of {len(text)} digits is refused (at most "
                             f"{MAX_INTEGER_DIGITS}): no capability needs one")
                return 0
            return int(text, 0) if text[:2] in ("0x", "0o") else int(text)
        if tag == FLOAT_TAG:
            value = _float(text)
            if value != value or value in (float("inf"), float("-inf")):
                self.problem(node, YAML_NON_FINITE,
                             f"{text!r} is not a finite number: JSON (and the manifest) "
                             "cannot hold NaN or infinity")
            return value
        if tag == BOOL_TAG:
            return text.lower() == "true"
        if tag == NULL_TAG:
            return None
        hazard = HAZARD_MESSAGES.get(tag)
        if hazard:
            self.problem(node, hazard[0], hazard[1].format(value=text))
            return text
        self.problem(node, YAML_TAG, f"unsupported tag {tag!r}")
        return text


def _float(text: str) -> float:
    lowered = text.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if lowered.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)
