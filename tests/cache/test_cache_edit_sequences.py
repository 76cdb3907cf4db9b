"""Edits between cached compiles give what a compile without the cache gives.

The per-file pack stores only the positions earlier compiles asked for; these sequences
make a later compile ask new ones of unchanged, cached files (a duplicate tool name or
code pointing back into them, an override of their tool), add and remove files, and
keep values JSON cannot spell alike (floats, big integers, "null" text) in cached files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cache.edit_sequences import differences, outcomes

pytestmark = pytest.mark.independent

ROOT = Path(__file__).resolve().parents[2]
# A checkout of main before a change (`git archive REV compiler | tar -x -C DIR`), named by
# the environment; without one, only the cached-against-uncached halves run.
BASE = Path(os.environ.get("CAPC_BASE_CHECKOUT", "")) if os.environ.get("CAPC_BASE_CHECKOUT") \
    else None


def _api(code: str, tool: str, url: str = "https://api.example.com/v1/x", extra: str = "") -> str:
    return (f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code}\ntype: api\n"
            f"options:\n  name: {tool}\n  description: d\n  url: {url}\n{extra}")


_PARAMETERS = """\
  parameters:
    - name: q
      in: query
      schema: {type: number, default: 1e16, enum: [1e16, -0.0, 0.0001, 1e-05, 5e-324, 1e22]}
    - name: k
      in: query
      schema: {type: string, default: "null"}
"""
_ODD_VALUES = """\
  params:
    big: {type: integer, default: 18446744073709551616,
          enum: [18446744073709551616, -9223372036854775809]}
    zero: {type: number, default: -0.0, enum: [-0.0, 1e-300]}
  body_template: {"0": 1, "": null, "1e3": "null", "k": [~, 1.0, 1]}
  method: POST
"""
_OVERRIDE = "---\napiVersion: capc/v1\nkind: ToolOverride\ntool: {tool}\ndescription: new {n}\n"

SEQUENCES = {
    "duplicate tool name into a cached file": [
        {"a.yaml": _api("a", "shared"), "b.yaml": _api("b", "other")},
        {"b.yaml": _api("b", "shared")},
        {"b.yaml": _api("b", "other")},
    ],
    "duplicate code into a cached file": [
        {"a.yaml": _api("a", "t1"), "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("a", "t2")},
    ],
    "files added and removed": [
        {"a.yaml": _api("a", "t1"), "b.yaml": _api("b", "t2")},
        {"c.yaml": _api("c", "t1")},
        {"c.yaml": None},
        {"b.yaml": None},
    ],
    "override of a cached file's tool": [
        {"a.yaml": _api("a", "t1"), "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("b", "t2") + _OVERRIDE.format(tool="t1", n=1)},
        {"b.yaml": _api("b", "t2") + _OVERRIDE.format(tool="t1", n=2)},
    ],
    "values JSON may spell differently, then a clash": [
        {"a.yaml": _api("a", "t1", extra=_PARAMETERS), "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("b", "t1")},
    ],
    "null documents before and between": [
        {"a.yaml": "---\n---\n" + _api("a", "t1") + "---\n~\n---\n" + _api("a2", "t3"),
         "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("b", "t3")},
    ],
    "values only marshal keeps": [
        {"a.yaml": _api("a", "t1", extra=_ODD_VALUES), "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("a", "t1")},
        {"b.yaml": _api("b", "t2", extra=_ODD_VALUES)},
    ],
    "a file named with an undecodable byte": [
        {"caf\udce9.yaml": _api("a", "t1"), "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("a", "t1")},
        {"caf\udce9.yaml": None},
    ],
    "an edit undone": [
        {"a.yaml": _api("a", "t1"), "b.yaml": _api("b", "t2")},
        {"b.yaml": _api("a", "t1")},
        {"b.yaml": _api("b", "t2")},
        {"b.yaml": _api("a", "t1")},
    ],
}
_TEMPLATE = ("apiVersion: capc/v1\nkind: Capability\ncode: '{{ code }}'\nname: t\n"
             "type: internal\n")
# Sequences compiled with options: the template's variables change while every plain
# file (and so the per-file pack's keys) stays the same; warnings in cached files.
OPTION_SEQUENCES: dict[str, tuple[list[str], list[dict[str, str | bytes | None]]]] = {
    "template variables make a clash with a cached file": (["--vars", "src/vars.txt"], [
        {"a.yaml": _api("a", "t1"), "t.yaml.j2": _TEMPLATE, "vars.txt": "code: x\n"},
        {"vars.txt": "code: a\n"},
        {"vars.txt": "code: x\n"},
    ]),
    "warnings in a cached file, then a clash": (["--allow-private-networks"], [
        {"a.yaml": _api("a", "t1", url="http://localhost/x"),
         "b.yaml": _api("b", "t2", url="http://127.0.0.1/y")},
        {"b.yaml": _api("a", "t2", url="http://127.0.0.1/y")},
    ]),
}


@pytest.mark.parametrize("name", sorted(OPTION_SEQUENCES))
def test_a_cached_sequence_with_options_prints_what_no_cache_prints(name: str,
                                                                    tmp_path: Path) -> None:
    options, states = OPTION_SEQUENCES[name]
    assert differences(ROOT, tmp_path, states, options) == []


@pytest.mark.skipif(BASE is None or not (BASE / "compiler").is_dir(),
                    reason="no base checkout to compare (CAPC_BASE_CHECKOUT)")
@pytest.mark.parametrize("name", sorted(OPTION_SEQUENCES))
def test_a_sequence_with_options_prints_what_the_base_checkout_prints(name: str,
                                                                      tmp_path: Path) -> None:
    options, states = OPTION_SEQUENCES[name]
    this = outcomes(ROOT, tmp_path / "this", states, options)
    base = outcomes(_base(), tmp_path / "base", states, options)
    assert this == base


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_a_cached_sequence_prints_what_no_cache_prints(name: str, tmp_path: Path) -> None:
    assert differences(ROOT, tmp_path, SEQUENCES[name]) == []


# Sequences whose outcome changed on purpose since the base: a file name that is not
# UTF-8 crashed the base's writer (tests/source/test_file_names.py).
def _base() -> Path:
    assert BASE is not None
    return BASE


CHANGED_SINCE_BASE = frozenset({"a file named with an undecodable byte"})


@pytest.mark.skipif(BASE is None or not (BASE / "compiler").is_dir(),
                    reason="no base checkout to compare (CAPC_BASE_CHECKOUT)")
@pytest.mark.parametrize("name", sorted(SEQUENCES.keys() - CHANGED_SINCE_BASE))
def test_a_sequence_prints_what_the_base_checkout_prints(name: str, tmp_path: Path) -> None:
    this = outcomes(ROOT, tmp_path / "this", SEQUENCES[name])
    base = outcomes(_base(), tmp_path / "base", SEQUENCES[name])
    assert this == base
