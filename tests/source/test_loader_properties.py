"""Anchors, tags and escapes after every kind of separator: the loader's fast paths
(compiler/source/yaml_converter.py, ``NodeConverter.for_text``) answer as its general path.

Written apart from the loader's own tests: each property body is placed after each
character that might (or might not) let libyaml start a property, in block, flow,
complex-key, sequence and later-document contexts, so an anchor the per-text test misses
would show as data, positions or problems that differ from the general converter's.
"""

from __future__ import annotations

import pytest

from tests.source.test_converter_fast_paths import assert_fast_is_general

pytestmark = pytest.mark.independent

SEPARATORS = ["", " ", "\t", "\n", "\r\n", "\r", ",", "[", "{", "? ", ": ", "- ", "-", ":",
              "?", "!", "|", ">", "#", "%", "@", "`", "'", '"', "\ufeff", "\u00a0", "\\",
              "*", "&", "}", "]"]
BODIES = ["&a x", "&a [1]", "!!str x", "!t x", "! x", "&a !!int 1", "!!int &a 1", "&a",
          "!<tag:yaml.org,2002:str> x"]
CONTEXTS = ["k:{s}{b}\nr: *a\n", "k: [{s}{b}]\n", "k: {{a:{s}{b}}}\n", "{s}{b}\n",
            "- {s}{b}\n- *a\n", "? {s}{b}\n: v\n", "---\nx: 1\n---\n{s}{b}\n",
            "x: 1\n...\n---{s}{b}\n", "[a,{s}{b}, *a]\n", "{{? {s}{b} : 1, b: *a}}\n",
            # the separator opens a flow collection that is closed again: an anchor the
            # text test missed would leave its alias to a converter that keeps no table
            "[[{s}{b}], *a]\n", "[{{{s}{b}: 1}}, *a]\n", "{{a: [{s}{b}], b: *a}}\n",
            "{{a: {{{s}{b}}}, b: *a}}\n", "[{{a:{s}{b}}}, *a]\n", "k: [{s}{b}]\nr: *a\n"]
ESCAPES = ['code: "a\\N"\n', 'code: "a\\_b"\n', 'code: "a\\L"\n', 'code: "a\\P"\n',
           'code: "a\\t"\n', 'code: "a\\x00"\n', 'code: "a\\u200b"\n', 'name: "\\U0000FEFF"\n',
           'code: "\\xad"\n', 'code: "a\\e"\n', 'code: "a\\\n  \\u200bb"\n',
           '"a\\u200b": 1\n', '? "a\\u200b"\n: 1\n', 'labels: ["a\\u200b"]\n',
           "%TAG ! tag:yaml.org,2002:\n--- !int 5\n", "%TAG !e! tag:e.com,2000:\n---\nx: !e!f 1\n",
           "\ufeffx: &a 1\ny: *a\n", "x: 1\r\ny: &a 2\r\nz: *a\r\n", "x:\t&a 1\ny: *a\n",
           "&a a: b\n*a : c\n", "{&a a: b, *a : c}\n", "x: &a {a: 1}\n<<: *a\n"]


@pytest.mark.parametrize("context", CONTEXTS)
def test_properties_after_every_separator(context: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for separator in SEPARATORS:
        for body in BODIES:
            assert_fast_is_general(context.format(s=separator, b=body), monkeypatch)


@pytest.mark.parametrize("text", ESCAPES)
def test_escapes_directives_and_line_ends(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_fast_is_general(text, monkeypatch)
