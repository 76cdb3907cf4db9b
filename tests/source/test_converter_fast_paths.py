"""The loader's per-text fast paths answer exactly as its general path.

``_Converter.for_text`` skips alias bookkeeping when the text has no ``&``, the property
probe when it has no ``!`` or ``&``, and the invisible-character search when it has no
invisible character and no backslash. The general path (every check, as a converter
made without ``for_text``) is the definition: data, every position, every problem.
``decode_source`` skips its control-character search for an ASCII text of allowed bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, SequenceNode

from compiler.source import yaml_converter
from compiler.source.characters import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS
from compiler.source.yaml_loader import MAX_DEPTH, decode_source, load_documents
from compiler.source.yaml_resolver import StrictParser


def _general(problems: list[yaml_converter.YamlProblem], text: str) -> Any:
    return yaml_converter.NodeConverter(problems, text)  # every flag on: nothing skipped


def _answers(text: str) -> tuple[Any, ...]:
    documents, problems = load_documents(text)
    return ([(d.index, d.line, _typed(d.data), d.positions.values) for d in documents],
            problems)


def _typed(value: Any) -> Any:
    # == alone would take True for 1 and 1.0 for 1: compare the types too.
    if isinstance(value, dict):
        return [(key, _typed(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return type(value).__name__, repr(value)


def assert_fast_is_general(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _answers(text)
    with monkeypatch.context() as patched:
        patched.setattr(yaml_converter.NodeConverter, "for_text", staticmethod(_general))
        general = _answers(text)
    assert fast == general


def test_the_general_path_is_really_taken_when_patched(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    with monkeypatch.context() as patched:
        patched.setattr(yaml_converter.NodeConverter, "for_text",
                        staticmethod(lambda problems, text: made.append(1)
                                    or _general(problems, text)))
        load_documents("a: 1\n")
    assert made == [1]
    converter = yaml_converter.NodeConverter.for_text([], "a: 1\n")
    assert not (converter.shared or converter.properties or converter.hidden)


BOUNDARY_TEXTS = [
    # An & in a string but no anchor: the bookkeeping runs, for nothing, the same answer.
    'desc: "R&D"\nname: x\nlist: [a, b]\n',
    "desc: 'a & b'\nd: {e: f}\n",
    # Escapes that decode to an invisible character the raw text does not hold.
    'name: "a\\u200bb"\n',
    '"na\\u200bme": x\n',
    'codes: [ok, "a\\u2060b"]\n',
    'tool: "\\xad"\n',
    'name: "\\t"\nk: "\\N"\n',  # escapes that decode to visible characters
    # An invisible character written as itself, in a key and in an identifier.
    "na\u200bme: x\n",
    "tool_names: [a, b\u200bc]\n",
    # Tags and anchors in either order, on keys and values; a ! only in a string.
    "k: &a !!str 3\nl: *a\n",
    "k: !!str &a 3\nl: *a\n",
    "&a !!str k: v\nb: *a\n",
    "! k: v\n! 12: w\n",
    "k: ! 12\nl: !!int 7\nm: !local x\n",
    'desc: "Hello!"\nname: x\n',
    "a: &a [x, {b: c}]\nb: *a\nc: *a\n",
    "a: &a {b: *a}\n",
    "<<: {a: b}\nx: <<\n",
    "a: no\nb: 0777\nc: 1:30\nd: .nan\ne: " + "1" * 70 + "\n",
    "a: 1\na: 2\nb: [1, 2]\nb: {c: d}\n",
    "? [a, b]\n: c\n1: d\nnull: e\n",
    "a: 1\n---\nb: [x, 2.5, true, ~]\n",
]


@pytest.mark.parametrize("text", BOUNDARY_TEXTS)
def test_each_boundary_answers_as_the_general_path(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_fast_is_general(text, monkeypatch)


def test_an_escaped_invisible_character_is_still_refused() -> None:
    _, problems = load_documents('name: "a\\u200bb"\n"k\\u2060": v\n')
    assert [(p.line, p.col, p.code.id) for p in problems] == [
        (1, 7, "invisible-character"), (2, 1, "invisible-character")]


def _nested(depth: int, leaf: str) -> str:
    return "".join("  " * level + f"k{level}:\n" for level in range(depth)) + "  " * depth + leaf


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
@pytest.mark.parametrize("leaf", ["leaf: 1\n", "- 1\n", "- [1]\n", "leaf: {a: b}\n"])
def test_scalar_leaves_at_the_depth_bound(
        depth: int, leaf: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_fast_is_general(_nested(depth, leaf), monkeypatch)
    assert_fast_is_general("[" * depth + "x" + "]" * depth + "\n", monkeypatch)


def test_a_scalar_one_level_past_the_bound_is_refused_and_keeps_its_key() -> None:
    text = _nested(MAX_DEPTH, "leaf: 1\n")
    [document], problems = load_documents(text)
    assert [p.code.id for p in problems] == ["yaml-too-deep"]
    path = (*(f"k{level}" for level in range(MAX_DEPTH)), "leaf")
    assert document.positions.values[path] == (0, 0, MAX_DEPTH + 1, 2 * MAX_DEPTH + 1)


_SCALARS = ["x", "no", "0777", "1:30", "12", "0x1f", "1.5", ".nan", "null", "~", "<<", "true",
            "1" * 70, "2024-01-01", "'q'", '"a&b"', "a&b", "a!b", '"\\u200b"', '"\\t"',
            "\u200bz", "!!str 12", "! 12", "!local v", "&a v", "*a", "&a !!str 3", "!!str &a 3"]
_KEYS = ["name", "code", "tool", "codes", "tool_names", "k", "dup", "dup", '"n\\u200b"',
         "n\u2060", "! k", "!!str s", "!!int 3", "1", "<<", "yes", "&k kk", "*k", "null",
         "[a, b]"]


def _flow(draw: st.DrawFn, depth: int) -> str:
    kind = draw(st.integers(0, 9 if depth < 4 else 0))
    if kind <= 5:
        return draw(st.sampled_from(_SCALARS))
    prefix = draw(st.sampled_from(["", "", "&a ", "&b ", "!!seq ", "!!map "]))
    if kind <= 7:
        items = [_flow(draw, depth + 1) for _ in range(draw(st.integers(0, 3)))]
        return prefix + "[" + ", ".join(items) + "]"
    entries = [f"{draw(st.sampled_from(_KEYS))}: {_flow(draw, depth + 1)}"
               for _ in range(draw(st.integers(0, 3)))]
    return prefix + "{" + ", ".join(entries) + "}"


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """Block mappings and sequences of hostile and ordinary scalars, keys and properties."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        key = draw(st.sampled_from(_KEYS))
        style = draw(st.integers(0, 2))
        if style == 0:
            lines.append(f"{key}: {_flow(draw, 0)}")
        elif style == 1:
            lines.append(f"{key}:")
            lines += [f"- {_flow(draw, 1)}" for _ in range(draw(st.integers(1, 3)))]
        else:
            lines.append(f"{key}:")
            lines += [f"  {draw(st.sampled_from(_KEYS))}: {_flow(draw, 1)}"
                      for _ in range(draw(st.integers(1, 3)))]
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None)
@given(yaml_texts())
def test_any_text_answers_as_the_general_path(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_fast_is_general(text, monkeypatch)


def _decode_by_the_regex(raw: bytes) -> tuple[str | None, tuple[int, int, str] | None]:
    # decode_source's general path, without its ASCII pass.
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None, None
    match = CONTROL_CHARACTERS.search(text)
    if match is None:
        return text, None
    before = text[:match.start()]
    return None, (before.count("\n") + 1, match.start() - before.rfind("\n"), "control-character")


@pytest.mark.parametrize("code", range(128))
def test_each_ascii_character_is_refused_as_the_regex_refuses_it(code: int) -> None:
    raw = b"a: 1\nb: x" + bytes([code]) + b"y\n"
    text, problem = decode_source(raw)
    found = (problem.line, problem.col, problem.code.id) if problem else None
    assert (text, found) == _decode_by_the_regex(raw)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=0x3000), max_size=40))
def test_any_text_decodes_as_the_regex_decides(text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    decoded, problem = decode_source(raw)
    expected = _decode_by_the_regex(raw)
    if expected[0] is None and expected[1] is None:  # not UTF-8: an encoding problem
        assert problem is not None and problem.code.id == "encoding"
        return
    found = (problem.line, problem.col, problem.code.id) if problem else None
    assert (decoded, found) == expected


def _nodes(node: Node) -> Iterator[Node]:
    """Every node of a composed tree, an aliased node once per alias."""
    yield node
    if isinstance(node, MappingNode):
        for key, value in node.value:
            yield from _nodes(key)
            yield from _nodes(value)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            yield from _nodes(item)


def _composed(text: str) -> list[Node] | None:
    parser = StrictParser(text)
    try:
        roots = []
        while parser.check_node():
            roots.append(parser.get_node())
        return roots
    except yaml.YAMLError:
        return None  # a text that does not compose is never converted
    finally:
        parser.dispose()


# Each kind of place a property can be written, as an entry of a top-level mapping (so an
# alias may follow it), some where libyaml keeps the property, some where it is text.
_PLACES = ["k: {}x", "k:\n  {}x", "k:\n- {}x", "k: [a,{}x]", "k: [{}x]", "k: {{a: {}x}}",
           "k: {{{}a: v}}", "k: {{a:{}x}}", "k: [?{}a]", "{}k: v", "k: a{}x", "k: 'a'{}x",
           'k: "a"{}x', "k: [a]{}x", "k: {{a: b}}{}x", "k: *a{}x", "k: !t{}x", "k: -{}x",
           "k: ?{}x", "k: |{}\n  x", "k:\n  a\n  {}x", "# c {}x\nk: x", "k: x # {}x",
           "k: [{}x, *p]", "k: {{a: {}x, b: *p}}"]
@pytest.mark.parametrize("place", _PLACES)
@pytest.mark.parametrize("prefix", ["", "a: &a [b]\n", "r: R&D, a=1&b=2, {x}&y!\n",
                                    "%TAG !e! tag:e.test,2000:\n---\n"])
def test_every_kept_property_is_where_the_text_tests_look(place: str, prefix: str) -> None:
    # For each property (&anchor, !tag, and both) at each kind of place: when the text
    # composes, every node whose text starts with a property, and every node reached
    # twice, is announced by the whole-text tests that let the converter skip work.
    for written in ("&p", "!t", "&p !t", "!t &p", "!", "&p *a"):
        text = prefix + place.format(written + " ") + "\n" + "s: *p\n" * ("&" in written)
        roots = _composed(text)
        if roots is None:
            continue
        converter = yaml_converter.NodeConverter.for_text([], text)
        nodes = [node for root in roots for node in _nodes(root)]
        starts = {text[node.start_mark.index:node.start_mark.index + 1] for node in nodes}
        if starts & {"&", "!"}:
            assert converter.properties, text
        if len({id(node) for node in nodes}) < len(nodes):
            assert converter.shared, text


def test_only_the_character_escapes_can_make_an_invisible_character() -> None:
    for code in range(32, 127):
        text = f'k: "a\\{chr(code)}{"200b" if chr(code) in "xuU" else ""}"\n'
        roots = _composed(text.replace("\\x200b", "\\xad").replace("\\U200b", "\\U0000200b"))
        if roots is None:
            continue
        value = roots[0].value[0][1].value
        assert (INVISIBLE_CHARACTERS.search(value) is not None) == (chr(code) in "xuU"), text


def test_strings_with_property_characters_take_the_fast_path() -> None:
    text = ('url: "https://x.test/s?a=1&b={to}&c=2"\nbody: "To={to}&Body={body}"\n'
            'desc: R&D, Q&A and more! Wow!\npattern: "^\\\\d+$"\n')
    converter = yaml_converter.NodeConverter.for_text([], text)
    assert not (converter.shared or converter.properties or converter.hidden)
