"""The strict resolver: which tag each YAML scalar gets, and the parser that uses it.

YAML 1.2 core-schema scalars resolve as written; the YAML 1.1 forms whose meaning differs
(``no``, ``0777``, ``1:30``) resolve to marker tags the loader refuses, and so does a
merge key. ``StrictParser`` is libyaml's parser and composer with this resolver (the
pure-Python ones when PyYAML was built without libyaml); ``yaml_loader`` converts.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from compiler.diagnostics import Code

YAML_AMBIGUOUS_BOOL = Code(
    "yaml-ambiguous-bool", "a plain value is a boolean in YAML 1.1 but a string in YAML 1.2")
YAML_AMBIGUOUS_NUMBER = Code(
    "yaml-ambiguous-number", "a plain value is read as a different number in YAML 1.1 and 1.2")
CODES = (YAML_AMBIGUOUS_BOOL, YAML_AMBIGUOUS_NUMBER)

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

# The composing parser (libyaml's when present), for other readers of YAML with positions.
ComposingParser = _Parser


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

HAZARD_MESSAGES = {
    AMBIGUOUS_BOOL_TAG: (
        YAML_AMBIGUOUS_BOOL,
        "{value!r} is a boolean in YAML 1.1 but a string in YAML 1.2; "
        "write true/false for a boolean or quote it ('{value}') for a string",
    ),
    AMBIGUOUS_OCTAL_TAG: (
        YAML_AMBIGUOUS_NUMBER,
        "{value!r} is octal in YAML 1.1 but decimal in YAML 1.2; "
        "quote it for a string, drop the leading zero, or write 0o… for octal",
    ),
    AMBIGUOUS_SEXAGESIMAL_TAG: (
        YAML_AMBIGUOUS_NUMBER,
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


# The resolvers a plain scalar's first character selects, the wildcard ones appended, as
# BaseResolver.resolve gathers them on every call: an immutable table, built once here,
# after the last _implicit. Most texts (keys, words) start with a character no resolver
# names, and are strings without a regular expression.
_BY_FIRST_CHARACTER: Mapping[str, tuple[tuple[str, re.Pattern[str]], ...]] = MappingProxyType({
    first: tuple((*resolvers, *StrictResolver.yaml_implicit_resolvers.get(None, [])))
    for first, resolvers in StrictResolver.yaml_implicit_resolvers.items() if first is not None
})
_WILDCARD: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    StrictResolver.yaml_implicit_resolvers.get(None, []))
_DEFAULT_TAGS: Mapping[type[Node], str] = MappingProxyType(
    {ScalarNode: STR_TAG, SequenceNode: SEQ_TAG, MappingNode: MAP_TAG})


# Plain texts up to this long have their tag remembered for the rest of a compile; longer
# ones (descriptions) rarely repeat, and the table answers them without a pattern anyway.
REMEMBERED_LENGTH = 64


def plain_tag(value: str) -> str:
    """The tag of the plain (unquoted) scalar ``value``, as BaseResolver.resolve gives it."""
    for tag, pattern in _BY_FIRST_CHARACTER.get(value[:1], _WILDCARD):
        if pattern.match(value):
            return tag
    return STR_TAG


class StrictParser(_Parser, StrictResolver):
    """libyaml's parser and composer with our resolver; no constructor (we convert)."""

    def __init__(self, stream: str, tags: dict[str, str] | None = None) -> None:
        """``tags``: the plain texts' tags already resolved in this compile (one dict per
        compile, shared by its files' parsers; filled here)."""
        _Parser.__init__(self, stream)
        StrictResolver.__init__(self)
        self._tags: dict[str, str] = {} if tags is None else tags

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        """BaseResolver.resolve's answer, from the table of resolvers by first character.

        Quoted scalars are strings and collections take their kind's tag: with no path
        resolvers registered, that is what BaseResolver answers too. A plain text's tag
        depends on the text alone, so each short one is resolved once per compile (a tree
        repeats its keys and words thousands of times). Proven equal by
        tests/source/test_loader_fast_paths.py::test_any_plain_text_resolves_as_the_base_resolver_says
        and ::test_remembered_tags_are_the_resolved_ones.
        """
        if kind is not ScalarNode or not implicit[0]:
            return _DEFAULT_TAGS[kind]
        tag = self._tags.get(value)
        if tag is None:
            tag = plain_tag(value)
            if len(value) <= REMEMBERED_LENGTH:
                self._tags[value] = tag
        return tag

    # No path resolvers are registered (tests/source/test_loader_fast_paths.py checks), so
    # there is nothing to track per level. libyaml's composer calls these two around every
    # node (a hundred thousand times in the bench corpus): C functions that ignore their
    # arguments cost a compile about 10 ms less than Python methods that do nothing.
    # The results are ignored by the composer, hence the different return types.
    descend_resolver = staticmethod(operator.is_)  # type: ignore[assignment]
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]
