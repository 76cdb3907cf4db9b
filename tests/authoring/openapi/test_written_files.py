"""The import's files loaded as the data they were rendered from (compiler/source/
written_files.py) against parsing them (the general path): the same data, value for value
and type for type, the same first line, and the same answer to every position question a
compile can ask, for every operation of real documents and for generated shapes; data the
strict loader would give back otherwise is parsed."""

from __future__ import annotations

import marshal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.authoring.openapi.generated_tree import HeldFiles, compile_diagnostics
from compiler.authoring.openapi.render import render_tool, rendered_data, yaml_text
from compiler.compile_result import CompileOptions, TreeOverlay
from compiler.source.documents import parse_source
from compiler.source.written_files import LayoutPositions, written_document
from compiler.source.yaml_loader import Locator, PositionMap
from compiler.tree_compile import CompileRequest, compile_tree
from tests.authoring.openapi.corpus import CorpusDocument
from tests.authoring.openapi.directory_corpus import directory_corpus
from tests.authoring.openapi.public_corpus import public_corpus
from tests.authoring.openapi.test_yaml_writer import _KEYS, _VALUES, generated_tools

pytestmark = pytest.mark.fastpath
ABSENT = "__no_such_key__"


def _same(parsed: Any, held: Any) -> bool:
    """Equal, with the same type at every node and the same key order."""
    if type(parsed) is not type(held):
        return False
    if type(parsed) is dict:
        return list(parsed) == list(held) and all(
            _same(parsed[key], held[key]) for key in parsed)
    if type(parsed) is list:
        return len(parsed) == len(held) and all(map(_same, parsed, held))
    if type(parsed) is float:
        return repr(parsed) == repr(held)
    return bool(parsed == held)


class _CountedTable:
    """The parsed table, counting how often the written document had to ask it."""

    def __init__(self, table: Locator) -> None:
        self.table = table
        self.made = 0

    def __call__(self) -> Locator:
        self.made += 1
        return self.table


def _questions(table: PositionMap) -> list[tuple[tuple[Any, ...], bool]]:
    """Every node's path (and an absent child of each), asked for the value and the key."""
    paths = [*table.values, *((*path, ABSENT) for path in table.values),
             (ABSENT,), (ABSENT, "x"), (0,)]
    return [(tuple(path), key) for path in paths for key in (False, True)]


def assert_loads_as_parsed(name: str, text: str, data: dict[str, Any],
                           shallow_without_parse: bool = True) -> bool:
    """``text`` written from ``data`` loads as ``data`` both ways (False: the data was
    refused and the file is parsed, which is then checked to differ or be unusual)."""
    raw = text.encode("utf-8")
    documents, problems = parse_source(name, raw, {})
    held = marshal.loads(marshal.dumps(data))  # as the import holds it
    counted = _CountedTable(documents[0].positions if documents else PositionMap({}))
    loaded = written_document(name, raw, held, counted, lambda positions: positions)
    if loaded is None:
        return False
    assert not problems and len(documents) == 1, name
    parsed = documents[0]
    assert _same(parsed.data, loaded.data), name
    assert (loaded.path, loaded.index, loaded.line) == (parsed.path, parsed.index, parsed.line)
    assert isinstance(parsed.positions, PositionMap)
    shallow = [(path, key) for path, key in _questions(parsed.positions) if len(path) <= 2]
    for path, key in shallow:
        assert loaded.positions.locate(path, key=key) == parsed.positions.locate(
            path, key=key), (name, path, key)
    if shallow_without_parse:
        assert counted.made == 0, f"{name}: a shallow question parsed the file"
    for path, key in _questions(parsed.positions):
        assert loaded.positions.locate(path, key=key) == parsed.positions.locate(
            path, key=key), (name, path, key)
    return True


def _assert_document(document: CorpusDocument) -> tuple[int, int]:
    """How many files of ``document`` were taken as their data, of how many."""
    taken = count = 0
    for tool in generated_tools(document):
        text = render_tool(tool, "../../schemas/capability-v1.json", "spec.yaml")
        taken += assert_loads_as_parsed(f"{tool.operation.code}.yaml", text,
                                        rendered_data(tool))
        count += 1
    return taken, count


@pytest.mark.parametrize("document", [public_corpus("github"), public_corpus("stripe"),
                                      public_corpus("kubernetes"), directory_corpus("graph")],
                         ids=lambda d: d.name)
def test_written_documents_load_as_parsed(document: CorpusDocument) -> None:
    """CI's subsets of real documents: nearly every file is taken as its data (the rest,
    Kubernetes' texts with indented lines, are parsed), every shallow question answered
    from its lines, every answer the parse's."""
    taken, count = _assert_document(document)
    assert count > 40 and taken >= 0.75 * count, (taken, count)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5))
def test_any_written_shape_loads_as_parsed(data: dict[str, Any]) -> None:
    """Generated shapes (awkward keys and texts, any nesting): taken as their data only
    when that is what the parse gives, and answering every question as the parse does."""
    text = "# a header\n#\n" + yaml_text(data)
    raw = text.encode("utf-8")
    documents, problems = parse_source("x.yaml", raw, {})
    held = marshal.loads(marshal.dumps(data))
    if documents and not problems and _same(documents[0].data, held):
        assert_loads_as_parsed("x.yaml", text, data, shallow_without_parse=False)
    else:  # the file would not load as this data: it must be parsed
        assert written_document("x.yaml", raw, held, lambda: PositionMap({}),
                                lambda positions: positions) is None


@pytest.mark.parametrize("data", [
    {"code": "x", "tuple": ("a", "b")},
    {"<<": {"a": 1}},
    {"options": {"we\u200bird": 1}},
    {"code": "a\u200bb"},
    {"codes": ["ok", "a\u2060b"]},
    {"n": 10 ** 70},
    {"f": float("nan")},
    {"f": float("inf")},
    {1: "int key"},
    {"set": {1, 2}},
    {"bytes": b"x"},
    {"type": ["\ud800"]},
    {"description": "a\udfffb"},
    {"options": {"k\ud83d": 1}},
    {},
], ids=repr)
def test_data_the_loader_gives_back_otherwise_is_parsed(data: dict[Any, Any]) -> None:
    raw = b"code: x\n"
    assert written_document("x.yaml", raw, data, lambda: PositionMap({}),
                            lambda positions: positions) is None


def test_nesting_past_the_loader_limit_is_parsed() -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(70):
        deep = {"n": deep}
    assert written_document("x.yaml", b"n: {}\n", deep, lambda: PositionMap({}),
                            lambda positions: positions) is None


@pytest.mark.parametrize("raw", [b"code: \x07x\n", b"\xffcode: x\n", b"code: \xe2\x80\xaex\n"])
def test_bytes_that_do_not_decode_cleanly_are_parsed(raw: bytes) -> None:
    assert written_document("x.yaml", raw, {"code": "x"}, lambda: PositionMap({}),
                            lambda positions: positions) is None


def test_a_leading_byte_order_mark_loads_as_parsed() -> None:
    assert assert_loads_as_parsed("x.yaml", "\ufeffcode: x\nn: 1\n", {"code": "x", "n": 1})


@pytest.mark.parametrize("text", [
    "---\ncode: x\n",
    "code: x\n'quoted': 1\n",
    "options:\n- a\n",
    "options:\n  - a\n",
    "options:\n  a: 1\n  'b c': 2\n  d: 3\n",
    "options:\n  a:\n  b: 1\n",
    "options:\n  # a comment\n  a: 1\n",
    "options: {a: 1}\ncode: x\n",
    "options:\n    a: 1\n    b: 2\n",
    "  code: x\n",
], ids=repr)
def test_layouts_the_writer_does_not_make_are_answered_by_the_parse(text: str) -> None:
    """Every answer is the parse's, whatever the lines."""
    documents, problems = parse_source("x.yaml", text.encode(), {})
    if problems or not documents:
        return
    table = documents[0].positions
    assert isinstance(table, PositionMap)
    positions = LayoutPositions(text, lambda: table)
    for path, key in _questions(table):
        assert positions.locate(path, key=key) == table.locate(path, key=key), (path, key)


def _compiled(files: HeldFiles, out: str, written: bool) -> Any:
    overlay = TreeOverlay.of({f"{out}/{name}": files[name] for name in files}, written={
        f"{out}/{name}": files.data(name) for name in files} if written else None)
    return compile_tree(CompileRequest(sources=(out,), use_cache=False), overlay,
                        options=CompileOptions(strict=True))


def test_a_compile_of_written_files_says_what_a_compile_of_parsed_ones_says(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files with findings deep in them (each diagnostic parses its file for the position)
    and clean ones: the same diagnostics, manifest and verdict either way."""
    monkeypatch.chdir(tmp_path)
    files = HeldFiles()
    for index, tool in enumerate(generated_tools(public_corpus("github"))):
        data = rendered_data(tool)
        if index % 3 == 0:  # a finding in a nested argument: an unknown type
            options = data["options"]
            table = next((name for name in ("params", "path_params", "body_params")
                          if options.get(name)), None)
            if table is not None:
                first = next(iter(options[table]))
                options[table] = {**options[table],
                                  first: {**options[table][first], "type": "bogus"}}
        text = render_tool(type(tool)(tool.operation, data, tool.notes, tool.settings),
                           "../../schemas/capability-v1.json", "spec.yaml")
        files.add(f"{tool.operation.code}.yaml", text.encode(), data)
    both = [_compiled(files, "capabilities/api", written) for written in (True, False)]
    assert both[0].diagnostics == both[1].diagnostics
    assert any(d.is_error for d in both[0].diagnostics)
    assert both[0].manifest == both[1].manifest
    found = compile_diagnostics(files, "capabilities/api", CompileRequest(use_cache=False),
                                CompileOptions(strict=True))
    assert found == list(dict.fromkeys(both[1].diagnostics))


def test_held_files_keep_the_data_they_were_rendered_from() -> None:
    files = HeldFiles()
    files.add("a.yaml", b"code: a\n", {"code": "a", "n": [1, 2.5, None]})
    files.add("b.yaml", b"code: b\n")
    files.add("c.yaml", b"code: c\n", {"code": object()})  # marshal cannot hold it
    assert files.data("a.yaml") == {"code": "a", "n": [1, 2.5, None]}
    assert files.data("b.yaml") is None and files.data("c.yaml") is None
    assert files.without({"b.yaml"}).data("a.yaml") == {"code": "a", "n": [1, 2.5, None]}


def test_a_document_text_the_parser_refuses_is_judged_as_written(tmp_path: Any) -> None:
    """A JSON document's lone surrogate is written as an escape YAML refuses: the import's
    check parses that file (its data is not taken as loaded), so it never leaves a tree
    the next compile refuses."""
    from tests.authoring.openapi.helpers import document, get, imported, write

    spec = write(tmp_path, document({
        "/odd": {"get": get("getOdd", description="half a pair: \ud800 here")},
        "/fine": {"get": get("getFine")}}), "api.json")
    out = tmp_path / "capabilities" / "api"
    outcome = imported(spec, out)
    if outcome.exit_code == 0:
        compiled = compile_tree(CompileRequest(sources=(str(out),), use_cache=False))
        assert not [d for d in compiled.diagnostics if d.is_error]
    assert (out / "get_fine.yaml").exists() or outcome.exit_code != 0
