"""The reader: YAML 1.2 with string keys, positions on demand, and every bad file located."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.authoring.openapi.document import (
    MAX_DOCUMENT_BYTES,
    DocumentFile,
    read_document_file,
)
from compiler.authoring.openapi.problems import ImportRefused, parts_of, pointer_of
from tests.authoring.openapi.helpers import document, get, imported, messages, write


def read(path: Path) -> DocumentFile:
    return read_document_file(path.resolve(), path.name)


def refused(path: Path) -> str:
    with pytest.raises(ImportRefused) as caught:
        read(path)
    return "\n".join(f"{d.line}:{d.col} {d.code} {d.message}" for d in caught.value.diagnostics)


def test_numeric_keys_are_strings_and_yaml11_words_stay_strings(tmp_path: Path) -> None:
    path = write(tmp_path, "openapi: 3.0.3\npaths:\n  /a:\n    get:\n      responses:\n"
                           "        200: {description: ok}\n        404: {description: gone}\n"
                           "      x-flags: [yes, no, on, 0777, 1:30]\n")
    data = read(path).data
    operation = data["paths"]["/a"]["get"]
    assert list(operation["responses"]) == ["200", "404"]
    assert operation["x-flags"] == ["yes", "no", "on", "0777", "1:30"]


def test_positions_are_found_on_demand_in_yaml_and_json(tmp_path: Path) -> None:
    yaml_file = read(write(tmp_path, "a:\n  b:\n    - x\n    - {c: 1}\n"))
    assert (yaml_file.locate(("a", "b", 1, "c")).line, yaml_file.locate(("a", "b", 1, "c")).col) \
        == (4, 11)
    json_file = read(write(tmp_path, '{\n "a": {\n  "b": [1, {"c": 2}]\n }\n}', "d.json"))
    where = json_file.locate(("a", "b", 1, "c"))
    assert (where.line, where.col) == (3, 18)
    assert json_file.locate(("a", "missing", "deeper")).line == 2  # nearest ancestor


@pytest.mark.parametrize(("text", "code", "line"), [
    ("a: [1, 2\n", "openapi-syntax", 2),
    ('{"a": 1,,}', "openapi-syntax", 1),
    ("a: 1\na: 2\n", "openapi-yaml", 2),
    ("", "openapi-empty", 1),
    ("a: &x [*x]\n", "openapi-yaml", 1),
])
def test_bad_files_are_located_errors(tmp_path: Path, text: str, code: str, line: int) -> None:
    found = refused(write(tmp_path, text, "d.json" if text.startswith("{") else "d.yaml"))
    assert f" {code} " in found
    assert found.startswith(f"{line}:")


def test_an_alias_bomb_is_refused_not_expanded(tmp_path: Path) -> None:
    lines = ["a0: [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines[0] = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"
    found = refused(write(tmp_path, "\n".join(lines) + "\n"))
    assert "alias bomb" in found


def test_non_utf8_and_oversized_documents_are_refused_unread(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("title: caf\xe9\n".encode("latin-1"))
    assert "openapi-encoding" in refused(bad)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:  # sparse: 100 MB on paper, nothing on disk
        handle.truncate(100 * 1024 * 1024)
    assert huge.stat().st_size > MAX_DOCUMENT_BYTES
    assert "openapi-too-large" in refused(huge)


def test_truncated_document_is_a_located_error_and_writes_nothing(tmp_path: Path) -> None:
    full = write(tmp_path, document({"/a": {"get": get("a")}}), "full.json").read_text()
    spec = write(tmp_path, full[: len(full) // 2], "cut.json")
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1
    assert "openapi-syntax" in messages(outcome)
    assert not (tmp_path / "out").exists()


def test_older_swagger_is_refused_with_a_working_conversion(tmp_path: Path) -> None:
    spec = write(tmp_path, {"swagger": "1.2", "info": {"title": "t", "version": "1"},
                            "paths": {}})
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1
    assert "swagger2openapi" in messages(outcome)
    assert messages(outcome).startswith(f"{spec}:1:10 openapi-swagger2")  # the value
    assert [d.code for d in outcome.diagnostics] == ["openapi-swagger2"]


@pytest.mark.parametrize("version", ["2.0", "4.0.0", None])
def test_unsupported_versions_are_named(tmp_path: Path, version: str | None) -> None:
    data = document({})
    data["openapi"] = version
    outcome = imported(write(tmp_path, data), tmp_path / "out")
    assert "openapi-version" in messages(outcome)
    assert "3.0, 3.1 and 3.2" in messages(outcome)


def test_validator_findings_are_located_warnings(tmp_path: Path) -> None:
    # Real documents (OpenAI's) break the specification where an import never reads, so
    # the validator's findings are reported, not fatal; what the importer reads and
    # cannot use is its own located error.
    spec = write(tmp_path, "openapi: 3.0.3\ninfo: {title: t, version: '1'}\n"
                           "servers: [{url: 'https://api.example.com'}]\npaths:\n"
                           "  /a:\n    get:\n      responses: {'200': {description: ok}}\n"
                           "      parameters:\n        - {name: q, in: nowhere}\n")
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    (finding,) = [d for d in outcome.diagnostics if d.code == "openapi-invalid"]
    assert finding.line == 9 and not finding.is_error
    text = (tmp_path / "out" / "get_a.yaml").read_text()
    assert "optional nowhere parameter 'q' left out" in text


@pytest.mark.parametrize("parts", [(), ("paths", "/a/{b}", "get"), ("a~b", "c/d", "")])
def test_json_pointers_round_trip(parts: tuple[str, ...]) -> None:
    pointer = pointer_of(parts)
    assert parts_of(pointer.removeprefix("#")) == parts
