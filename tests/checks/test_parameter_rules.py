"""``check_parameters`` over entries that mix every keyword, type, section, nesting and
wrong value the checks exist for.

The flat-scalar shortcut these entries once proved equal was removed (it bought about
2 ms on the bench corpus, docs/performance.md "Fast paths"); the checks it skipped now
run for every entry, and the entries below still exercise them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks.parameter_rules import check_parameters
from compiler.diagnostics import Diagnostic
from compiler.source.documents import SourceDocument, parse_source

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


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_SECTIONS),
                       st.dictionaries(st.sampled_from(["a", "b"]), _entries(), max_size=2),
                       max_size=3),
       st.booleans(), st.sampled_from([None, "{a}", {"k": "{b}"}]))
def test_every_entry_is_checked_and_located(
    sections: dict[str, dict[str, Any]], strict: bool, template: Any,
) -> None:
    options: dict[str, Any] = {"url": "https://api.example.com/{a}", **sections}
    if strict:
        options["strict"] = True
    if template is not None:
        options["body_template"] = template
    document = _document(options)
    found = check_parameters(document, options)
    assert all(isinstance(d, Diagnostic) and d.line >= 1 for d in found)
    assert check_parameters(document, options) == found  # the same answer each time


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
