"""Red team, sources (issue 12): what a pull request's files can make the compiler do.

Each case commits a hostile file and runs the real ``capc`` entry point: the answer must
be a located ``file:line:col`` error (or, for the cache, a miss), never a hang, a crash,
a traceback or a silently different reading. Items: 14 (template bounds), 15 (special
files and links out of the tree, ``diff --git`` included), 17 (explicit YAML tags),
19 (invisible line breaks, bidi and zero-width characters).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

from compiler.build import build
from tests.support.redteam import api_capability, capc, write_tree

INTERNAL = """\
apiVersion: capc/v1
kind: Capability
code: base
name: Base
type: internal
"""

# ------------------------------------------------------------------------ 14. templates

TEMPLATE_BOMBS = {
    "nested-loops-printing-nothing":
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "loop-over-huge-range": "{% for i in range(10**12) %}{% endfor %}",
    "recursive-macro-fan-out": "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}"
                               "{% endmacro %}{% set x = f(40) %}",
    "recursive-loop": "{% for x in [range(1000)] recursive %}{{ loop(x) }}{% endfor %}",
    "center": "{% set x = 'x'|center(1000000000) %}",
    "indent": "{% set x = 'a\\nb'|indent(1000000000) %}",
    "wordwrap": "{% set x = 'a b'|wordwrap(1000000000) %}",
    "format-filter-width": "{% set x = '%999999999s'|format('x') %}",
    "format-filter-star": "{% set x = '%*s'|format(1000000000, 'x') %}",
    "percent-width": "{% set x = '%999999999d' % 1 %}",
    "percent-precision": "{% set x = '%.999999999f' % 1.0 %}",
    "str-format-width": "{% set x = '{:>999999999}'.format('x') %}",
    "str-format-nested-width": "{% set x = '{:>{w}}'.format('x', w=1000000000) %}",
    "join-filter": "{% set s = 'x' * 1000000 %}{% set x = [s, s, s]|join %}",
    "join-method": "{% set s = 'x' * 1000000 %}{% set x = ''.join([s, s]) %}",
    "string-times": "{% set x = 'x' * 100000000 %}",
    "list-times-list": "{% set x = ([1] * 100000) * 100000 %}",
    "list-of-big-strings": "{% set s = 'x' * 1000000 %}{% set x = [s] * 1000000 %}",
    "power": "{% set x = 2 ** 100000 %}",
    "power-of-big-base": "{% set x = 99999999999 ** 10000 %}",
    "namespace-int-squaring": "{% set ns = namespace(x=3) %}{% for i in range(40) %}"
                              "{% set ns.x = ns.x * ns.x %}{% endfor %}",
    "namespace-int-doubling-by-plus": "{% set ns = namespace(x=3) %}{% for i in range(100000) %}"
                                      "{% set ns.x = ns.x + ns.x %}{% endfor %}",
    "namespace-string-tilde": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                              "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "namespace-string-plus": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                             "{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "namespace-percent": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                         "{% set ns.s = '%s%s' % (ns.s, ns.s) %}{% endfor %}",
    "namespace-format": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                        "{% set ns.s = '{}{}'.format(ns.s, ns.s) %}{% endfor %}",
    "namespace-join": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                      "{% set ns.s = [ns.s, ns.s]|join %}{% endfor %}",
    "namespace-replace": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                         "{% set ns.s = ns.s.replace('a', 'aa') %}{% endfor %}",
    "namespace-list": "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}"
                      "{% set ns.l = ns.l + ns.l %}{% endfor %}",
    "macro-doubling": "{% macro d(s) %}{{ s }}{{ s }}{% endmacro %}{% set ns = namespace(s='ab') %}"
                      "{% for i in range(40) %}{% set ns.s = d(ns.s) %}{% endfor %}",
    "captured-block-doubling": "{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                               "{% set block %}{{ ns.s }}{{ ns.s }}{% endset %}"
                               "{% set ns.s = block %}{% endfor %}",
    "expandtabs": "{% set x = '\\t'.expandtabs(1000000000) %}",
    "ljust": "{% set x = 'x'.ljust(1000000000) %}",
    "zfill": "{% set x = 'x'.zfill(1000000000) %}",
    "tojson-of-shared-list": "{% set s = 'x' * 1000000 %}{% set x = ([s] * 1)|list %}"
                             "{% set y = (x * 1000)|tojson %}",
}


@pytest.mark.parametrize("body", TEMPLATE_BOMBS.values(), ids=TEMPLATE_BOMBS.keys())
def test_template_bombs_are_located_errors(tmp_path: Path, body: str) -> None:
    text = INTERNAL + "description: x\n" + f"{body}\n"
    tree = write_tree(tmp_path, {"capabilities/t.yaml.j2": text})
    run = capc(tree, "validate", "--no-cache")
    assert run.code == 1, run.stderr
    assert re.match(r"capabilities/t\.yaml\.j2:7:1: error\[template-(sandbox|too-large|error)\]",
                    run.stderr), run.stderr


def test_ordinary_templates_still_render(tmp_path: Path) -> None:
    text = """\
{% set ns = namespace(total=0) %}
{% for region in ['eu', 'us'] %}
{% set ns.total = ns.total + loop.index * 2 %}
---
apiVersion: capc/v1
kind: Capability
code: {{ 'weather_%s' % region }}
name: {{ ('Weather ' ~ region) | upper | center(20) | trim }}
type: internal
description: {{ ['a', 'b'] | join(', ') }} {{ '{:>4}'.format(ns.total) }} {{ 2 ** 10 }}
{% endfor %}
"""
    tree = write_tree(tmp_path, {"capabilities/t.yaml.j2": text})
    run = capc(tree, "compile", "-o", "m.json", "--no-cache")
    assert run.code == 0, run.stderr
    manifest = (tree / "m.json").read_text()
    assert '"weather_eu"' in manifest and '"WEATHER US"' in manifest and "1024" in manifest


# ------------------------------------------------------------------ 15. special files


def _special(path: Path, kind: str, outside: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "symlink-to-dev-urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-to-fifo":
        fifo = outside.parent / "a-fifo"
        os.mkfifo(fifo)
        path.symlink_to(fifo)
    elif kind == "symlink-out-of-tree":
        outside.write_text(INTERNAL)
        path.symlink_to(outside)
    elif kind == "relative-symlink-out-of-tree":
        outside.write_text(INTERNAL)
        path.symlink_to(os.path.relpath(outside, path.parent))
    else:
        raise AssertionError(kind)


SPECIAL_KINDS = ["symlink-to-dev-zero", "symlink-to-dev-urandom", "fifo", "symlink-to-fifo",
                 "symlink-out-of-tree", "relative-symlink-out-of-tree"]


def _bounded(function: object, *arguments: object) -> object:
    """Run ``function`` in a thread; fail (rather than hang the suite) past 60 s."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(function(*arguments)),  # type: ignore[operator]
                              daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the compiler blocked on a special file"
    return result[0]


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_special_source_files_are_located_errors(tmp_path: Path, kind: str) -> None:
    tree = write_tree(tmp_path / "repo", {"capabilities/ok.yaml": api_capability()})
    _special(tree / "capabilities" / "bad.yaml", kind, tmp_path / "outside.yaml")
    run = _bounded(capc, tree, "validate")
    assert run.code == 1  # type: ignore[attr-defined]
    # A link to a device or FIFO outside the tree is refused for either reason.
    expected = ("source-link-outside" if "out-of-tree" in kind else
                "(not-regular-file|source-link-outside)" if "symlink" in kind
                else "not-regular-file")
    assert re.search(rf"^capabilities/bad\.yaml:1:1: error\[{expected}\]",
                     run.stderr, re.M), run.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["fifo", "symlink-to-dev-zero"])
def test_a_special_file_named_as_a_root_is_a_located_error(tmp_path: Path, kind: str) -> None:
    tree = tmp_path / "repo"
    _special(tree / "given.yaml", kind, tmp_path / "outside.yaml")
    run = _bounded(capc, tree, "validate", "given.yaml")
    assert run.code == 1  # type: ignore[attr-defined]
    assert re.search(r"^given\.yaml:1:1: error\[not-regular-file\]: given\.yaml is (a FIFO|a "
                     r"device)", run.stderr, re.M), run.stderr  # type: ignore[attr-defined]


def test_a_symlink_inside_the_tree_still_compiles(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "repo", {"capabilities/shared/real.yaml": api_capability()})
    (tree / "capabilities" / "link.yaml").symlink_to("shared/real.yaml")
    run = capc(tree, "validate")
    assert "duplicate-code" in run.stderr  # read through the link: the same capability twice


@pytest.mark.parametrize("kind", ["symlink-to-dev-zero", "fifo", "symlink-to-fifo"])
def test_special_vars_files_are_located_errors(tmp_path: Path, kind: str) -> None:
    tree = write_tree(tmp_path / "repo", {
        "capabilities/t.yaml.j2": INTERNAL.replace("code: base", "code: {{ code }}")})
    _special(tree / "vars.yaml", kind, tmp_path / "outside.yaml")
    run = _bounded(capc, tree, "validate", "--vars", "vars.yaml")
    assert run.code == 1  # type: ignore[attr-defined]
    assert re.search(r"^vars\.yaml:1:1: error\[vars-unreadable\]: vars\.yaml is (a FIFO|a device)",
                     run.stderr, re.M), run.stderr  # type: ignore[attr-defined]


def test_an_oversized_source_is_read_bounded(tmp_path: Path) -> None:
    tree = write_tree(tmp_path / "repo", {"capabilities/big.yaml": "a: " + "x" * (8 << 20)})
    run = capc(tree, "validate")
    assert run.code == 1 and "file-too-large" in run.stderr


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../../etc/hostname",
                                    "../outside.yaml"])
def test_diff_git_refuses_links_out_of_the_tree_cleanly(tmp_path: Path, target: str) -> None:
    repo = write_tree(tmp_path / "repo", {"capabilities/a.yaml": api_capability(),
                                          "outside.yaml": INTERNAL})
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    (repo / "capabilities" / "link.yaml").symlink_to(target)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    run = capc(repo, "diff", "--git", "HEAD~1..HEAD", "--fail-on", "security")
    assert run.code in (1, 2)
    assert "LinkOutsideDestinationError" not in run.output
    assert "link.yaml" in run.stderr
    assert re.search(r"symlink leading out of the (source )?tree", run.stderr), run.stderr


# ------------------------------------------------------------------ 17. explicit YAML tags

REFUSED_TAGS = {
    "int-of-letters": "!!int abc",
    "float-of-letters": "!!float x",
    "int-binary": "!!int 0b11",
    "int-underscores": "!!int 1_000",
    "int-padded-quoted": '!!int " 12 "',
    "int-plain": "!!int 12",
    "bool-yes": "!!bool yes",
    "bool-maybe": "!!bool maybe",
    "null-of-text": "!!null foo",
    "verbatim-int": "!<tag:yaml.org,2002:int> 5",
    "binary": "!!binary aGVsbG8=",
    "timestamp": "!!timestamp 2001-12-14",
    "local-tag": "!include other.yaml",
    "python-tag": "!!python/object/apply:os.system [id]",
    "set": "!!set {a, b}",
    "omap": "!!omap [a: 1]",
    "str-on-mapping": "!!str {a: 1}",
    "map-on-scalar": "!!map x",
}


@pytest.mark.parametrize("value", REFUSED_TAGS.values(), ids=REFUSED_TAGS.keys())
def test_explicit_tags_are_located_errors(tmp_path: Path, value: str) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": INTERNAL + f"description: {value}\n"})
    run = capc(tree, "validate")
    assert run.code == 1
    assert re.search(r"^capabilities/a\.yaml:6:14: error\[yaml-tag\]", run.stderr, re.M), \
        run.stderr


@pytest.mark.parametrize("key", ["!!int 1", "!!bool true", "!foo k"])
def test_explicit_tags_on_keys_are_errors(tmp_path: Path, key: str) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": INTERNAL + f"metadata: {{{key}: x}}\n"})
    run = capc(tree, "validate")
    assert run.code == 1 and re.search(r"error\[yaml-(tag|key-type)\]", run.stderr)


@pytest.mark.parametrize("digits", [4301, 5000, 100000])
def test_huge_plain_integers_are_located_errors(tmp_path: Path, digits: int) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": INTERNAL + "ordering: 1" + "0" * digits
                                 + "\n"})
    run = capc(tree, "validate")
    assert run.code == 1
    assert re.search(r"^capabilities/a\.yaml:6:11: error\[yaml-number-too-large\]",
                     run.stderr, re.M), run.stderr


@pytest.mark.parametrize(("value", "expected"), [
    ("! 12", "12"), ("!!str 12", "12"), ("! true", "true"), ("&a ! 7", "7")])
def test_non_specific_and_str_tags_give_strings(tmp_path: Path, in_dir: object, value: str,
                                                expected: str) -> None:
    write_tree(tmp_path, {"capabilities/a.yaml": INTERNAL + f"description: {value}\n"})
    os.chdir(tmp_path)
    result = build(["capabilities"], use_cache=False)
    assert result.manifest is not None, result.diagnostics
    assert result.manifest["capabilities"][0]["description"] == expected


# ------------------------------------------------- 19. invisible line breaks and characters

LINE_BREAKS = {"NEL": "\u0085", "LS": "\u2028", "PS": "\u2029"}


@pytest.mark.parametrize("character", LINE_BREAKS.values(), ids=LINE_BREAKS.keys())
@pytest.mark.parametrize("place", ["comment", "plain-value", "quoted-value", "key"])
def test_unicode_line_breaks_are_refused(tmp_path: Path, character: str, place: str) -> None:
    line = {"comment": f"name: x  # note{character}is_default: true",
            "plain-value": f"name: x{character}is_default: true",
            "quoted-value": f'name: "x{character}y"',
            "key": f"na{character}me: x"}[place]
    text = INTERNAL.replace("name: Base", line)
    tree = write_tree(tmp_path, {"capabilities/a.yaml": text})
    run = capc(tree, "compile", "-o", "m.json")
    assert run.code == 1
    assert not (tree / "m.json").exists()
    column = line.index(character) + 1
    assert re.search(rf"^capabilities/a\.yaml:4:{column}: error\[control-character\]",
                     run.stderr, re.M), run.stderr


def test_line_numbers_count_only_real_line_breaks(tmp_path: Path) -> None:
    text = INTERNAL + "description: ok\nmetadata: {a: !!int 1}\n"
    tree = write_tree(tmp_path, {"capabilities/a.yaml": text})
    run = capc(tree, "validate")
    assert "capabilities/a.yaml:7:" in run.stderr


BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
        "\u2069", "\u200e", "\u200f", "\u061c"]


@pytest.mark.parametrize("character", BIDI, ids=[f"U+{ord(c):04X}" for c in BIDI])
@pytest.mark.parametrize("place", ["comment", "description"])
def test_bidi_controls_are_refused_anywhere(tmp_path: Path, character: str, place: str) -> None:
    extra = (f"# reviewed {character}ok\n" if place == "comment"
             else f"description: left {character}right\n")
    tree = write_tree(tmp_path, {"capabilities/a.yaml": INTERNAL + extra})
    run = capc(tree, "validate")
    assert run.code == 1
    assert re.search(r"^capabilities/a\.yaml:6:\d+: error\[control-character\]: bidirectional",
                     run.stderr, re.M), run.stderr


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"]


@pytest.mark.parametrize("character", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
@pytest.mark.parametrize("place", ["key", "code", "tool-name", "override-tool", "namespace"])
def test_invisible_characters_in_keys_codes_and_names_are_refused(
        tmp_path: Path, character: str, place: str) -> None:
    files = {
        "key": {"a.yaml": INTERNAL + f"metadata: {{team{character}: x}}\n"},
        "code": {"a.yaml": INTERNAL.replace("code: base", f"code: ba{character}se")},
        "tool-name": {"a.yaml": api_capability(name=f"tool{character}_a")},
        "override-tool": {"a.yaml": "apiVersion: capc/v1\nkind: ToolOverride\n"
                                    f"tool: memory__re{character}member\ndescription: x\n"},
        "namespace": {"a.yaml": "apiVersion: capc/v1\nkind: ToolOverride\n"
                                f"tool: memory__remember\nnamespace: me{character}m\n"},
    }[place]
    tree = write_tree(tmp_path, {f"capabilities/{k}": v for k, v in files.items()})
    run = capc(tree, "validate")
    assert run.code == 1
    assert re.search(r"error\[(invisible-character|control-character)\]", run.stderr), run.stderr


def test_visible_non_ascii_text_is_still_fine(tmp_path: Path) -> None:
    text = INTERNAL + "description: \"Météo — 天気 👍🏽 שלום\"\n"
    tree = write_tree(tmp_path, {"capabilities/a.yaml": text})
    assert capc(tree, "validate").code == 0
