"""The one-pass reader of block-style YAML (``block_yaml.py``) gives the general path's
answers: the data ``_Converter.convert(_compose(text))`` gives (types and key order
included) and the line and column of each value's composed node, or it gives up and the
general path reads the text. Real documents (GitHub's and Stripe's must be read in one
pass), the directory's documents rendered as block YAML, a case for every class it gives
up on, generated documents, and n against 8n."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.openapi_read import every_path
from compiler.authoring.openapi.block_yaml import OutsideTheSubset, read_block_yaml
from compiler.authoring.openapi.document import (
    DocumentFile,
    _compose,
    _Converter,
    read_document_file,
)
from compiler.diagnostics import Location
from tests.authoring.openapi.directory_corpus import DOCUMENTS, directory_document
from tests.authoring.openapi.public_corpus import public_document
from tests.support.complexity import assert_linear

pytestmark = pytest.mark.fastpath

Path_ = tuple[str | int, ...]
MAX_PATHS = 30_000
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _typed(value: Any) -> str:
    """The data as JSON: 1, 1.0 and true differ, and so does key order."""
    return json.dumps(value, ensure_ascii=True)


def _sample(data: Any) -> list[Path_]:
    """Every path (a spread of at most MAX_PATHS), and beside each container's a missing
    key and an index past its end (located at the container, as the walk does)."""
    paths = list(every_path(data))
    if len(paths) > MAX_PATHS:
        step = len(paths) / MAX_PATHS
        paths = [paths[int(number * step)] for number in range(MAX_PATHS)]
    extra: list[Path_] = []
    for path in paths[::7]:
        extra += [(*path, "no such key"), (*path, 10**6), (*path, -1), (*path, 0)]
    return paths + extra


def read_both_ways(text: str, *, sample: Callable[[Any], list[Path_]] = _sample) -> bool:
    """Whether the one-pass reader read ``text``; when it did, its data and positions are
    asserted equal to the general path's (which must then read the text too)."""
    try:
        read = read_block_yaml(text)
    except OutsideTheSubset:
        return False
    node = _compose(text)
    assert node is not None
    assert _typed(read.data) == _typed(_Converter("doc").convert(node, 0))
    composed = DocumentFile("doc", Path("doc"), text, read.data, "", _tree=node)
    for path in sample(read.data):
        location = composed.locate(path)
        assert read.positions.locate(path) == (location.line, location.col), path
    return True


@pytest.mark.parametrize("name", ["github", "stripe"])
def test_github_and_stripe_read_in_one_pass(name: str) -> None:
    text = public_document(name).read_text(encoding="utf-8")
    assert read_both_ways(text), f"{name}'s document fell back to the general path"


def test_kubernetes_json_is_left_to_the_json_reader() -> None:
    path = public_document("kubernetes")
    text = path.read_text(encoding="utf-8")
    assert not read_both_ways(text)  # a flow mapping across lines: not block YAML
    document = read_document_file(path, "kubernetes.yaml")
    assert document._block is None
    assert _typed(document.data) == _typed(json.loads(text))


# The directory's documents are JSON: each is read by the json module, and the one-pass
# reader gives up on it; rendered as block YAML by PyYAML (long strings folded across
# lines, quoted or plain; Unicode escaped or not) they must be read in one pass, except
# where PyYAML writes a key longer than 128 characters as a "? " key.
RENDERED_MAX_BYTES = 1_500_000
FALLS_BACK_RENDERED = frozenset({"adyen-management", "bitbucket"})
SMALL_ENOUGH = sorted(name for name in DOCUMENTS if name != "graph")


@pytest.mark.parametrize("name", SMALL_ENOUGH)
def test_directory_documents_as_json_and_as_block_yaml(name: str) -> None:
    path = directory_document(name)
    text = path.read_text(encoding="utf-8")
    assert not read_both_ways(text)
    if len(text) > RENDERED_MAX_BYTES:
        return
    data = json.loads(text)
    unicode = sum(map(ord, name)) % 2 == 0
    rendered = yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=unicode,
                         width=60 + len(name) % 40, indent=2 + len(name) % 3,
                         default_flow_style=False)
    assert read_both_ways(rendered) is (name not in FALLS_BACK_RENDERED), name


# name -> (text, whether the one-pass reader reads it: True, False, or None for either).
CASES: dict[str, tuple[str, bool | None]] = {
    "anchor and alias": ("a: &x 1\nb: *x\n", False),
    "anchor on a mapping": ("a: &x\n  b: 1\nc: *x\n", False),
    "tag": ("a: !!str 1\n", False),
    "local tag": ("a: !thing x\n", False),
    "duplicate key": ("a: 1\nb: 2\na: 3\n", False),
    "duplicate key quoted and plain": ("'200': a\n200: b\n", False),
    "merge key": ("a: {}\n<<: {}\n", False),
    "multi-line plain": ("a: one two\n  three\n\n  four\n\n\n  five\nb: 1\n", True),
    "multi-line plain in a sequence": ("- one\n  two\n- three\n", True),
    "multi-line plain on the next line": ("a:\n  one\n  two\nb: x\n", True),
    "multi-line plain with a comment": ("a: one # c\n  two\n", False),
    "multi-line plain ending at a comment": ("a: one\n  # c\nb: 2\n", True),
    "multi-line plain holding ': '": ("a: one\n  two: three\n", False),
    "multi-line plain with a dash": ("a: one\n  - two\n", True),
    "tab in indentation": ("a:\n\tb: 1\n", False),
    "tab in a value": ("a: b\tc\n", False),
    "complex key": ("? a\n: b\n", False),
    "question mark key in a sequence": ("- ? a\n  : b\n", False),
    "flow mapping across lines": ("a: {b: 1,\n  c: 2}\n", False),
    "flow mapping on one line": ("a: {b: 1, 'c d': \"e\", f: true, g: x y}  # c\n", True),
    "flow mappings in a sequence": ("- {type: string}\n- {$ref: '#/x'}\n", True),
    "flow mapping with a duplicate key": ("a: {b: 1, b: 2}\n", False),
    "flow mapping with a key and no value": ("a: {b}\n", False),
    "flow mapping with a colon after a quoted key": ("a: {\"b\":1}\n", False),
    "flow mapping nested": ("a: {b: {c: 1}}\n", False),
    "flow mapping with a URL": ("a: {url: http://x}\n", False),
    "flow sequence across lines": ("a: [1,\n  2]\n", False),
    "flow sequence on one line": ("a: [1, 'two', \"three\", 4.5, true, null, x y]\n", True),
    "empty flow collections": ("a: []\nb: {}\nc: [ ]\nd: { }  # c\n", True),
    "nested flow sequence": ("a: [[1]]\n", False),
    "document start": ("---\na: 1\n", True),
    "document start with a comment before": ("# c\n---\na: 1\n", True),
    "document end": ("a: 1\n...\n", False),
    "two documents": ("a: 1\n---\nb: 2\n", False),
    "directive": ("%YAML 1.2\n---\na: 1\n", False),
    "BOM inside": ("a: \ufeffb\n", False),
    "CRLF": ("a: 1\r\nb: 2\r\n", False),
    "CR": ("a: 1\rb: 2\r", False),
    "trailing spaces": ("a: b   \nc:   \nd:\n  - e  \n  -   \n", True),
    "trailing spaces in a literal": ("a: |\n  b  \n  \n   \n  c\n", True),
    "spaces past the indentation in a folded text": ("a: >\n  b\n     \n  c\n   \n", True),
    "spaces past the indentation before the first line": ("a: |\n     \n  b\n", False),
    "spaces past an indentation indicator": ("a: |2\n     \n  b\n", True),
    "tab in a literal": ("a: |\n  func() {\n  \treturn\n  }\n\t\nb: >\n  x\n  \ty\n  z\n", False),
    "tabs in block scalars": ("a: |\n  func() {\n  \treturn\t1\n  }\nb: >\n  x\n  \ty\n  z\n"
                              "c: |-\n    x\n    \t\n", True),
    "tab starting a literal": ("a: |\n  \tx\n", False),
    "tab in a comment": ("a: 1 # \tc\n", False),
    "tab in a quoted text": ("a: 'b\tc'\n", False),
    "trailing spaces under the indentation": ("a: |\n  b\n \n  c\n", True),
    "no final line break": ("a: b", True),
    "no final line break after a literal": ("a: |\n  b", False),
    "Unicode keys": ("é: ü\n😀: \"x😀\"\n日本: 語\nz: é😀é\n", True),
    "line separator": ("a: b\u2028c\n", False),
    "next line": ("a: b\x85c\n", False),
    "control character": ("a: b\x07c\n", False),
    "double-quoted escapes": ('a: "\\u00e9\\x41\\t\\n\\\\\\"\\/\\0\\e\\N\\_\\L\\P\\ "\n', True),
    "double-quoted astral escape": ('a: "\\U0001F600"\n', True),
    "double-quoted surrogate escape": ('a: "\\ud800"\n', False),
    "double-quoted unknown escape": ('a: "\\q"\n', False),
    "double-quoted escaped quote": ('a: "\\\'"\n', False),
    "single-quoted quote": ("a: 'it''s'\nb: ''''\nc: ''\n", True),
    "single-quoted across lines": ("a: 'one\n  two''s\n\n  three '\n", True),
    "double-quoted across lines": ('a: "one \\u00e9\n\n\n  two  \n  three"\n', True),
    "double-quoted escaped line break": ('a: "one \\\n  two"\n', True),
    "double-quoted escaped space at a fold": ('a: "one\\ \n  two"\n', False),
    "quoted across lines, less indented": ("a:\n  b: 'one\n two'\n", False),
    "quoted key": ("'a b': 1\n\"c\\td\": 2\n'': 3\n", True),
    "text after a quoted scalar": ("a: 'b' c\n", False),
    "comment after a quoted scalar": ("a: 'b'  # c\n", True),
    "literal and folded": (
        "a: |\n  one\n   two\n\n  three\nb: >\n  one\n  two\n\n  three\n   four\n  five\n"
        "c: |-\n  x\n\n\nd: |+\n  x\n\n\ne: >-\n  x\n  y\nf: >+\n  x\n\ng: |2\n    x\n  y\n"
        "h: >2-\n   x\n  y\n", True),
    "literal at the end of the text": ("a: |+\n  x\n\n", True),
    "literal keeping trailing lines before a key": ("a: |+\n  x\n\nb: 1\n", True),
    "literal with a comment line inside": ("a: |\n  x\n  # not a comment\n  y\n", True),
    "literal ending at a less-indented comment": ("a:\n  b: |\n    x\n  # c\n  d: 1\n", True),
    "empty literal": ("a: |\nb: 1\n", True),
    "empty block scalars": ("a: |+\n\n   \n  \nb: >-\n\nc: |\n# c\nd: |+\n\n\n", True),
    "empty block scalar at the end without a break": ("a: |+\n\n  ", False),
    "literal in a sequence": ("- |\n  x\n- >-\n  y\n  z\n", True),
    "literal header with text": ("a: | x\n  y\n", False),
    "sequence of mappings": ("a:\n- b: 1\n  c: 2\n-   d: 3\n    e:\n    - f\n", True),
    "nested sequences": ("- - a\n  - b\n- - - c\n", True),
    "empty values": ("a:\nb: # c\nc:\n  # c\nd:\n- \n-\n- # c\ne: ~\n", True),
    "empty root": ("# only a comment\n", False),
    "root scalar": ("just text\n", False),
    "root sequence": ("- a\n- b: 1\n", True),
    "indented root": ("  a: 1\n  b: 2\n", True),
    "a sequence entry after a mapping's key": ("a: 1\n- b\n", False),
    "keys starting with indicators": ("-1: a\n?x: b\n:y: c\n-: d\n", None),
    "mapping value on the key's line": ("a: b: c\n", False),
    "sequence on the key's line": ("a: - b\n", False),
    "key with spaces before the colon": ("a  : 1\nb : 2\n", True),
    "keys that look like numbers": ("200: a\n0x1F: b\n1.5: c\ntrue: d\nnull: e\n~: f\n", True),
    "key with a comment": ("a #c: 1\n", False),
    "plain text with colons and hashes": ("a: b:c#d http://x\nb: -1\nc: :x\nd: ?y\n", True),
    "plain text starting with an indicator": ("a: %x\n", False),
    "plain text ending with a colon": ("a: b:\n", False),
    "plain text with a comment": ("a: b # c: d\n", True),
    "deep nesting": ("".join("  " * level + f"k{level}:\n" for level in range(200))
                     + "  " * 200 + "x\n", False),
    "long key": ("k" * 1200 + ": 1\n", False),
    "long plain number": ("a: " + "1" * 70 + "\n", True),
}

# Strings that look like numbers, booleans or null in every form the strict resolver
# knows, plain and quoted, as values and as keys.
LOOKALIKES = (
    "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "0", "-0",
    "+0", "7", "-12", "+12", "012", "0x1F", "0x1f", "0o17", "0o8", "0b11", "1.5", "-1.5", "+1.5",
    ".5", "-.5", "1.", "1e3", "1E3", "1e+3", "1.5e-3", "-1e3", "1e400", "-1e400", ".inf",
    "-.inf", "+.inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", "nan", "inf", "yes", "Yes", "YES",
    "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "n", "1:30", "-1:30:05",
    "1_000", "0777", "+0777", "1_0.5", "0.1.2", "1e", "0x", "0o",
)
CASES["lookalikes"] = (
    "".join(f"v{index}: {text}\nq{index}: '{text}'\nd{index}: \"{text}\"\n{text}: k{index}\n"
            for index, text in enumerate(LOOKALIKES)) + "empty:\n", True)
CASES["lookalikes in sequences"] = (
    "".join(f"- {text}\n" for text in LOOKALIKES)
    + "".join(f"- [{text}, '{text}']\n" for text in LOOKALIKES if ":" not in text)
    + "- [~, x]\n", True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_read_as_composed_or_given_up(name: str) -> None:
    text, expected = CASES[name]
    if expected is False:
        assert not read_both_ways(text)
        return
    read = read_both_ways(text)
    assert expected is None or read is expected, name


def test_values_have_the_resolved_types_and_columns() -> None:
    """Checked against written-down answers, not only against the general path: a wrong
    type (1 for 1.0, "true" for true) or a column off by one fails here."""
    text = ("openapi: 3.0.3\n"
            "x:\n"
            "  int: 12\n"
            "  float: 1.0\n"
            "  bool: true\n"
            "  null: ~\n"
            "  string: '12'\n"
            "  yaml11: yes\n"
            "  octal: 0777\n"
            "  hex: 0x1F\n"
            "  inf: .inf\n"
            "  list:\n"
            "  - a\n"
            "  -   b: [1, 'c']\n"
            "  empty:\n"
            "  é😀: |\n"
            "    text\n")
    read = read_block_yaml(text)
    assert _typed(read.data) == _typed({
        "openapi": "3.0.3",
        "x": {"int": 12, "float": 1.0, "bool": True, "null": None, "string": "12",
              "yaml11": "yes", "octal": "0777", "hex": 31, "inf": ".inf",
              "list": ["a", {"b": [1, "c"]}], "empty": None, "é😀": "text\n"}})
    locate = read.positions.locate
    assert locate(()) == (1, 1)
    assert locate(("openapi",)) == (1, 10)
    assert locate(("x",)) == (3, 3)
    assert locate(("x", "float")) == (4, 10)
    assert locate(("x", "string")) == (7, 11)
    assert locate(("x", "list")) == (13, 3)
    assert locate(("x", "list", 1)) == (14, 7)
    assert locate(("x", "list", 1, "b", 1)) == (14, 14)
    assert locate(("x", "empty")) == (15, 9)  # just past the colon, as libyaml says
    assert locate(("x", "é😀")) == (16, 7)  # columns count characters
    assert locate(("x", "nothing", "here")) == (3, 3)
    assert read_both_ways(text)


def test_a_document_read_in_one_pass_is_located_without_composing(tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text("openapi: 3.0.3\ninfo:\n  title: t\n  version: '1'\npaths: {}\n")
    document = read_document_file(path, "doc.yaml")
    assert document._block is not None
    assert document.locate(("info", "version")) == Location("doc.yaml", 4, 12)
    assert document.locate(("paths", "/a")) == Location("doc.yaml", 5, 8)
    assert document._tree is None and document._json is None
    # Positions are the text's: data changed in place or copied (reordered servers, a
    # converted Swagger 2.0 document) does not move them, as with the composed nodes.
    document.data["info"] = {"title": "other"}
    del document.data["paths"]
    assert document.locate(("info", "version")) == Location("doc.yaml", 4, 12)
    assert document.locate(("paths", "/a")) == Location("doc.yaml", 5, 8)
    assert document._tree is None


def test_a_text_it_gives_up_on_is_refused_as_before(tmp_path: Path) -> None:
    """Duplicate keys and aliases reach the general path, which refuses them located."""
    from compiler.authoring.openapi.problems import ImportRefused

    for text, message, line in (("a: 1\nb: 2\na: 3\n", "duplicate key 'a'", 3),
                                ("a: &x 1\nb: [*x, *x]\nc:\n  - *x\n", None, None)):
        path = tmp_path / "doc.yaml"
        path.write_text(text)
        if message is None:
            assert read_document_file(path, "doc.yaml").data == {"a": 1, "b": [1, 1],
                                                                "c": [1]}
            continue
        with pytest.raises(ImportRefused) as refused:
            read_document_file(path, "doc.yaml")
        diagnostic = refused.value.diagnostics[0]
        assert message in diagnostic.message and diagnostic.line == line


# Generated documents: PyYAML's renderings of random data in its many styles.
_TEXT = st.text(alphabet=st.sampled_from(
    list("abz AZ09:#-'\"\\,[]{}&*!|>?%@`.~_\n\t/é😀\u2028")), max_size=30)
_SCALARS = st.one_of(_TEXT, st.integers(-10**20, 10**20), st.booleans(), st.none(),
                     st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from(LOOKALIKES))
_DATA = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(_TEXT, _DATA, min_size=1, max_size=5),
       width=st.integers(10, 100), indent=st.integers(2, 5), unicode=st.booleans(),
       flow=st.sampled_from([False, None]), style=st.sampled_from([None, None, "'", '"']))
def test_generated_documents_read_as_composed_or_given_up(
        data: dict[str, Any], width: int, indent: int, unicode: bool, flow: bool | None,
        style: str | None) -> None:
    text = yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=unicode,
                     width=width, indent=indent, default_flow_style=flow,
                     default_style=style)
    read_both_ways(text)


_LINES = st.lists(st.sampled_from(["", " ", "x", "x y", " x", "  x  ", "# x", "x: y", "- x",
                                   "'x'", "   ", "é", "\tx", "x\ty", "      "]),
                  min_size=0, max_size=6)


@settings(max_examples=300, deadline=None)
@given(lines=_LINES, header=st.sampled_from(["|", ">", "|-", ">-", "|+", ">+", "|2", ">1-",
                                             "|+2", "| # c"]),
       where=st.sampled_from(["key", "nested", "entry"]), after=st.booleans(),
       final=st.booleans())
def test_generated_block_scalars_read_as_composed_or_given_up(
        lines: list[str], header: str, where: str, after: bool, final: bool) -> None:
    prefix, indent = {"key": ("a: ", "  "), "nested": ("a:\n  b: ", "    "),
                      "entry": ("- ", "  ")}[where]
    body = "".join(f"{indent}{line}\n" if line.strip() else f"{line}\n" for line in lines)
    text = f"{prefix}{header}\n{body}"
    if after:
        text += "- z\n" if where == "entry" else "c: z\n"
    read_both_ways(text if final else text.rstrip("\n"))


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(["x", "y z", "'q'", "a''b", '\\"', "\\u00e9", "#",
                                       " # c", "- d", ": e", "f:", "é", "  "]),
                      min_size=1, max_size=6),
       breaks=st.lists(st.sampled_from(["\n  ", "\n\n  ", "\n    ", "\n", "\n \n  ", " "]),
                       min_size=5, max_size=5),
       quote=st.sampled_from(["", "'", '"']), where=st.sampled_from(["key", "entry", "next"]))
def test_generated_scalars_across_lines_read_as_composed_or_given_up(
        words: list[str], breaks: list[str], quote: str, where: str) -> None:
    body = words[0] + "".join(separator + word
                              for separator, word in zip(breaks, words[1:], strict=False))
    prefix = {"key": "a: ", "entry": "- ", "next": "a:\n  "}[where]
    read_both_ways(f"{prefix}{quote}{body}{quote}\nb: 1\n" if where != "entry"
                   else f"{prefix}{quote}{body}{quote}\n- 1\n")


def block_document(n: int) -> Callable[[], object]:
    """A workload: n operations of a block YAML document with every kind of scalar."""
    operation = ("  /things/{index}:\n"
                 "    get:\n"
                 "      operationId: get{index}\n"
                 "      description: |\n"
                 "        Gets a thing.\n\n"
                 "        Long text.\n"
                 "      summary: >-\n"
                 "        A folded\n"
                 "        summary\n"
                 "      tags: [things, 'other']\n"
                 "      x-plain: one two\n"
                 "        three\n"
                 "      x-quoted: \"a \\u00e9\n"
                 "        b\"\n"
                 "      parameters:\n"
                 "      - name: id\n"
                 "        in: path\n"
                 "        required: true\n"
                 "        schema: {{}}\n"
                 "      responses:\n"
                 "        '200':\n"
                 "          description: ok  # comment\n")
    text = "openapi: 3.0.3\npaths:\n" + "".join(operation.format(index=index)
                                                 for index in range(n))
    return lambda: read_block_yaml(text)


def long_lines(n: int) -> Callable[[], object]:
    """A workload: long lines of quotes, escapes and comment marks (a regular expression
    that could backtrack would take quadratic time on them)."""
    texts = ("a: '" + "''x" * n + "\n",  # never closed: given up at the end
             'b: "' + "\\\\" * n + 'x \\"' * n + '"\n',
             "c: " + "y #" * n + "\n",
             "d: [" + "x, " * n + "y]\n",
             "e" * n + ": " + "f" * n + "\n")

    def read() -> object:
        for text in texts:
            with contextlib.suppress(OutsideTheSubset):
                read_block_yaml(text)
        return None
    return read


def test_reading_is_linear_in_the_document() -> None:
    assert_linear("tests.authoring.openapi.test_openapi_block_yaml:block_document", 200)


def test_reading_long_lines_is_linear() -> None:
    assert_linear("tests.authoring.openapi.test_openapi_block_yaml:long_lines", 2000)


def test_reordered_servers_and_swagger2_keep_the_texts_positions(tmp_path: Path) -> None:
    """The copies the import makes of a document read in one pass (servers reordered,
    Swagger 2.0 converted) locate as the composed text does, without composing."""
    from compiler.authoring.openapi.import_openapi import _as_openapi3
    from compiler.authoring.openapi.server_choice import ServersChosen, prefer_https

    path = tmp_path / "doc.yaml"
    path.write_text("openapi: 3.0.3\ninfo:\n  title: t\n  version: '1'\nservers:\n"
                    "- url: http://a.example.com\n- url: https://b.example.com\npaths: {}\n")
    document = read_document_file(path, "doc.yaml")
    chosen, notes = prefer_https(document)
    assert isinstance(chosen, ServersChosen) and notes
    composed = ServersChosen(chosen.shown, chosen.real, chosen.text, chosen.data,
                             chosen.sha256, _tree=_compose(chosen.text), moved=chosen.moved)
    for where in (("servers", 0, "url"), ("servers", 1), ("servers", 1, "url"), ("info",)):
        assert chosen.locate(where) == composed.locate(where), where
    assert chosen.locate(("servers", 0, "url")) == Location("doc.yaml", 7, 8)
    assert chosen._tree is None

    swagger = tmp_path / "swagger.yaml"
    swagger.write_text("swagger: '2.0'\ninfo:\n  title: t\n  version: '1'\nhost: a.example\n"
                       "paths:\n  /a:\n    get:\n      responses:\n        '200':\n"
                       "          description: ok\n")
    converted = _as_openapi3(read_document_file(swagger, "swagger.yaml"))
    again = DocumentFile(converted.shown, converted.real, converted.text, converted.data,
                         converted.sha256, _tree=_compose(converted.text))
    for where in (("paths", "/a", "get", "responses", "200"), ("servers", 0), ("info",)):
        assert converted.locate(where) == again.locate(where), where
    assert converted._tree is None
