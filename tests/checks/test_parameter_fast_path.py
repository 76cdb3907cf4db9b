"""``check_parameters``' shortcut for flat scalar entries gives the general checks' answers.

An entry of type string, integer, number or boolean that uses none of the keywords the
node and placement checks look into skips them; the entries below mix those with every
keyword, type, section, nesting and wrong value the checks exist for, so a shortcut that
took an entry it should not fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks import parameter_rules as parameters
from compiler.checks.parameter_rules import check_parameters
from compiler.diagnostics import Diagnostic
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath

_SECTIONS = ["path_params", "params", "body", "body_params", "files"]
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object",
                          "strange", None])
_VALUES = st.sampled_from([None, "x", 1, 2.5, True, [1], {"a": 1}, "deep_object", "json",
                           "repeat", "date", "int32", "^a+$", "(?=a)", "("])
_KEYWORDS = ["description", "required", "nullable", "default", "enum", "format", "pattern",
             "style", "minimum", "maximum", "min_length", "max_length", "min_items",
             "max_items", "items", "properties", "additional_properties", "unknown_key"]
_NUMBERS = ("minimum", "maximum", "min_length", "max_length", "min_items", "max_items")


@st.composite
def _entries(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    kind = draw(_TYPES)
    if kind is not None:
        entry["type"] = kind
    for keyword in draw(st.lists(st.sampled_from(_KEYWORDS), max_size=3, unique=True)):
        if keyword == "enum":
            entry[keyword] = draw(st.lists(_VALUES, max_size=3))
        elif keyword in ("items", "additional_properties"):
            entry[keyword] = {"type": draw(_TYPES) or "string"}
        elif keyword == "properties":
            entry[keyword] = {"a": {"type": draw(_TYPES) or "string"}}
        elif keyword == "description":
            entry[keyword] = "d"
        elif keyword in _NUMBERS:  # what the JSON Schema lets through to these checks
            entry[keyword] = draw(st.integers(0, 3))
        elif keyword in ("required", "nullable"):
            entry[keyword] = draw(st.booleans())
        elif keyword in ("format", "pattern", "style"):
            entry[keyword] = draw(_VALUES.filter(lambda value: isinstance(value, str)))
        else:
            entry[keyword] = draw(_VALUES)
    return entry


def _document(options: dict[str, Any]) -> SourceDocument:
    documents, problems = parse_source("a.yaml", b"options: {}\n", {})
    assert not problems
    return documents[0].with_data({"options": options})


def _general(document: SourceDocument, monkeypatch: pytest.MonkeyPatch) -> list[Diagnostic]:
    with monkeypatch.context() as patched:
        patched.setattr(parameters, "_is_plain_scalar", lambda spec: False)
        return check_parameters(document, document.data["options"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_SECTIONS),
                       st.dictionaries(st.sampled_from(["a", "b"]), _entries(), max_size=2),
                       max_size=3),
       st.booleans(), st.sampled_from([None, "{a}", {"k": "{b}"}]))
def test_shortcut_finds_what_the_general_checks_find(
    sections: dict[str, dict[str, Any]], strict: bool, template: Any,
) -> None:
    options: dict[str, Any] = {"url": "https://api.example.com/{a}", **sections}
    if strict:
        options["strict"] = True
    if template is not None:
        options["body_template"] = template
    document = _document(options)
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = _general(document, monkeypatch)
    assert check_parameters(document, options) == expected


def test_plain_entries_take_the_shortcut() -> None:
    assert parameters._is_plain_scalar({"type": "integer", "description": "d",
                                        "required": True, "minimum": 1})
    assert parameters._is_plain_scalar({"description": "a string by default"})
    for not_plain in ({"type": "string", "default": "x"}, {"type": "string", "enum": ["x"]},
                      {"type": "string", "style": "json"}, {"type": "array"},
                      {"type": "string", "format": "date"}, {"type": "string", "items": {}},
                      {"type": "boolean", "minimum": 1}, {"type": "object"}, "string"):
        assert not parameters._is_plain_scalar(not_plain), not_plain


def test_a_constraint_of_another_type_beside_a_default_is_a_keyword_error() -> None:
    """``minimum`` on a string with a default: the value check cannot apply the constraint
    (pydantic raises TypeError); the keyword error says what is wrong, no internal error."""
    document = _document({"url": "https://api.example.com/x", "params": {
        "q": {"type": "string", "minimum": 1, "default": "x"},
        "n": {"type": "integer", "min_length": 1, "enum": [1, 2]}}})
    found = check_parameters(document, document.data["options"])
    assert sorted((d.code, d.message) for d in found) == [
        ("api-parameter-keyword", "min_length does not apply to an integer (n)"),
        ("api-parameter-keyword", "minimum does not apply to a string (q)")]


def test_credentials_in_defaults_are_found_as_text_and_nested() -> None:
    """A string default is searched directly; any other default through iter_strings."""
    from compiler.checks.url_rules import check_body_template_secrets

    class Text(str):
        pass

    secret = "sk-abcdefghijklmnopqrstuvwx"
    document = _document({"url": "https://api.example.com/x", "params": {
        "a": {"type": "string", "default": secret},
        "b": {"type": "string", "default": "plain"},
        "c": {"type": "object", "default": {"k": [secret, "x"]}},
        "d": {"type": "string", "default": Text(secret)}}})
    found = check_body_template_secrets(document, document.data["options"])
    assert [d.code for d in found] == ["literal-credential"] * 3
    assert [d.message for d in found] == [found[0].message] * 3
