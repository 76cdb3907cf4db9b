"""``*.yaml.j2``: sandboxed rendering, diagnostics located in the template, ``tojson``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from compiler.source.templates import (
    MAX_OUTPUT_CHARS,
    load_template_variables,
    render_template,
)
from tests.support.capc import run_capc

LOOP_TEMPLATE = """\
# one capability per region
{% for region in regions %}
---
apiVersion: capc/v1
kind: Capability
code: weather_{{ region.code }}
name: {{ region.name | tojson }}
type: internal
{% endfor %}
"""


def test_every_rendered_line_maps_to_the_template_line_that_produced_it() -> None:
    regions = [{"code": "eu", "name": "Europe"}, {"code": "us", "name": "U.S."}]
    rendered = render_template("t.yaml.j2", LOOP_TEMPLATE, {"regions": regions})
    assert rendered.diagnostics == ()
    assert rendered.text is not None
    lines = rendered.text.splitlines()
    assert lines[0] == "# one capability per region"
    assert [rendered.source_line(n) for n in range(1, len(lines) + 1)] == [
        1, 3, 4, 5, 6, 7, 8, 3, 4, 5, 6, 7, 8
    ]
    assert lines[4] == "code: weather_eu" and lines[10] == "code: weather_us"


def test_multi_line_values_map_to_their_expression_line() -> None:
    text = "a: |\n  {{ block | indent(2) }}\nb: {{ tail }}\n"
    rendered = render_template("t.yaml.j2", text, {"block": "one\ntwo\nthree", "tail": 1})
    assert rendered.text == "a: |\n  one\n  two\n  three\nb: 1\n"
    assert [rendered.source_line(n) for n in range(1, 6)] == [1, 2, 2, 2, 3]


@pytest.mark.parametrize(
    ("text", "line", "code", "fragment"),
    [
        ("a: 1\nb: 2\nc: {{ missing }}\n", 3, "template-undefined", "'missing' is undefined"),
        ("a: 1\n{% for x in items %}\n- {{ x.nope }}\n{% endfor %}\n", 3, "template-undefined",
         "has no attribute 'nope'"),
        ("a: 1\n\n{% if %}\n", 3, "template-syntax", "Expected an expression"),
        ("a: 1\n{% for x in items %}\n", 2, "template-syntax", "endfor"),
        ("a: 1\nb: {{ 1 // zero }}\n", 2, "template-error", "ZeroDivisionError"),
        ("a: 1\n{% include 'other.yaml.j2' %}\n", 2, "template-include", "self-contained"),
    ],
)
def test_template_errors_point_at_the_template_line(text: str, line: int, code: str,
                                                    fragment: str) -> None:
    rendered = render_template("caps/t.yaml.j2", text, {"items": [1], "zero": 0})
    assert rendered.text is None
    [diagnostic] = rendered.diagnostics
    assert (diagnostic.path, diagnostic.line, diagnostic.code) == ("caps/t.yaml.j2", line, code)
    assert fragment in diagnostic.message


@pytest.mark.parametrize(
    "escape",
    [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__.os.system('true') }}",
        "{{ lipsum.__globals__['os'].popen('id').read() }}",
        "{{ joiner.__init__.__globals__ }}",
        "{{ namespace.__init__.__globals__ }}",
        "{{ (1).__class__.__base__.__subclasses__() }}",
        "{{ regions.append.__self__.__class__ }}",
        "{{ ''.format.__globals__ }}",
        "{{ '{0.__class__}'.format('') }}",
        "{{ regions.pop() }}{{ regions.clear() }}",
    ],
)
def test_sandbox_escape_attempts_are_refused(escape: str) -> None:
    regions = ["eu", "us"]
    rendered = render_template("evil.yaml.j2", f"a: 1\nb: {escape}\n", {"regions": regions})
    assert rendered.text is None
    [diagnostic] = rendered.diagnostics
    assert diagnostic.line == 2
    assert diagnostic.code in {"template-sandbox", "template-undefined"}
    assert "unsafe" in diagnostic.message or "sandbox" in diagnostic.message
    assert regions == ["eu", "us"]  # nothing the template did reached the caller's data


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("x: {{ 'a' * 100000000 }}\n", "template-sandbox"),
        ("x: {{ [0] * 100000000 }}\n", "template-sandbox"),
        ("x: {{ 7 ** 1000000 }}\n", "template-sandbox"),
        ("x: {{ '%0999999999d' % 1 }}\n", "template-sandbox"),
        ("{% for i in range(100000) %}{{ 'x' * 100 }}\n{% endfor %}", "template-too-large"),
    ],
)
def test_resource_bombs_are_refused_before_they_allocate(text: str, code: str) -> None:
    rendered = render_template("bomb.yaml.j2", text, {})
    assert rendered.text is None
    assert [d.code for d in rendered.diagnostics] == [code]


def test_output_just_under_the_cap_renders() -> None:
    rendered = render_template("big.yaml.j2", "x: {{ 'a' * size }}\n",
                               {"size": MAX_OUTPUT_CHARS - 10})
    assert rendered.diagnostics == ()
    assert rendered.text is not None and len(rendered.text) == MAX_OUTPUT_CHARS - 6


def test_tojson_keeps_a_hostile_value_one_string() -> None:
    hostile = 'Paris"\nurl: http://169.254.169.254/  # {{ injected }}: yes'
    template = "code: c\ndescription: {{ value | tojson }}\n"
    rendered = render_template("t.yaml.j2", template, {"value": hostile})
    assert rendered.text is not None
    assert yaml.safe_load(rendered.text) == {"code": "c", "description": hostile}
    # Without the filter the same value rewrites the document: why the docs insist on it.
    unsafe = render_template("t.yaml.j2", "code: c\ndescription: {{ value }}\n",
                             {"value": "x\nurl: http://evil.example/"})
    assert unsafe.text is not None
    assert yaml.safe_load(unsafe.text)["url"] == "http://evil.example/"


def test_tojson_emits_json_values_yaml_reads_back_with_their_types() -> None:
    body = {"source": "primethink", "pinned": True, "n": 3, "tags": ["a: b", "{slot}"]}
    rendered = render_template("t.yaml.j2", "body_template: {{ body | tojson }}\n",
                               {"body": body})
    assert rendered.text is not None
    assert yaml.safe_load(rendered.text) == {"body_template": body}


def test_variable_files_merge_later_wins_and_report_problems(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("region: eu\nhosts: [a]\n")
    (tmp_path / "prod.yaml").write_text("region: us\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "broken.yaml").write_text("a: [1,\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "hazards.yaml").write_text("country: no\ncountry: se\n")
    paths = [str(tmp_path / name) for name in
             ("base.yaml", "prod.yaml", "list.yaml", "broken.yaml", "empty.yaml", "gone.yaml",
              "hazards.yaml")]
    variables, problems = load_template_variables(paths)
    assert variables == {"region": "us", "hosts": ["a"]}
    # Variables files get the sources' strict loader: hazards are located errors.
    assert [(Path(d.path).name, d.code, d.line) for d in problems] == [
        ("list.yaml", "vars-not-mapping", 1),
        ("broken.yaml", "yaml-syntax", 2),
        ("gone.yaml", "vars-unreadable", 1),
        ("hazards.yaml", "yaml-ambiguous-bool", 1),
        ("hazards.yaml", "yaml-duplicate-key", 2),
    ]
    assert problems[1].line == 2


def test_validate_reports_yaml_errors_of_rendered_text_at_the_template_line(
    tmp_path: Path, in_dir
) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    (caps / "regions.yaml.j2").write_text(
        "# regions\n"
        "{% for region in regions %}\n"
        "---\n"
        "apiVersion: capc/v1\n"
        "kind: Capability\n"
        "code: weather_{{ region }}\n"
        "code: duplicate_{{ region }}\n"
        "name: Weather\n"
        "type: internal\n"
        "{% endfor %}\n"
    )
    (tmp_path / "vars.yaml").write_text("regions: [eu, us]\n")
    in_dir(tmp_path)
    result = run_capc("validate", "caps", "--vars", "vars.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "caps/regions.yaml.j2:7:" in result.stderr
    assert "duplicate" in result.stderr.lower()


def test_validate_reports_an_undefined_variable_at_its_template_line(
    tmp_path: Path, in_dir
) -> None:
    caps = tmp_path / "caps"
    caps.mkdir()
    (caps / "one.yaml.j2").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: x\nname: {{ display_name | tojson }}\n"
        "type: internal\n")
    in_dir(tmp_path)
    result = run_capc("validate", "caps", cwd=tmp_path)
    assert result.returncode == 1
    assert ("caps/one.yaml.j2:4:1: error[template-undefined]: 'display_name' is undefined"
            in result.stderr)
    (tmp_path / "vars.yaml").write_text("display_name: 'Weather: EU'\n")
    fixed = run_capc("validate", "caps", "--vars", "vars.yaml", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr


def _fenced_after(markdown: str, marker: str) -> str:
    start = markdown.index(marker)
    body = markdown[start:].split("\n", 1)[1]
    return body[: body.index("```")]


def test_the_documented_example_compiles(tmp_path: Path, in_dir, repo_root: Path) -> None:
    page = (repo_root / "docs" / "templates.md").read_text()
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "vars").mkdir()
    (tmp_path / "capabilities" / "weather-regions.yaml.j2").write_text(
        _fenced_after(page, "# capabilities/weather-regions.yaml.j2"))
    (tmp_path / "vars" / "prod.yaml").write_text(_fenced_after(page, "# vars/prod.yaml"))
    in_dir(tmp_path)
    result = run_capc("compile", "--vars", "vars/prod.yaml", "-o", "m.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "m.json").read_text())
    urls = {c["code"]: c["api"]["url"] for c in manifest["capabilities"]}
    assert urls == {"weather_eu": "https://eu.api.weather.com/v1/current",
                    "weather_us": "https://us.api.weather.com/v1/current"}
    names = {c["code"]: c["name"] for c in manifest["capabilities"]}
    assert names["weather_us"] == "Weather United States"
