"""Messages a newcomer meets in the first hour (issue 21, item 14): each names what to do."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.capc import run_capc

API = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: Weather
description: Weather.
type: api
options:
  url: https://api.weather.example/v1
  description: The weather.
  params:
{params}"""


def tree(root: Path, code: str = "weather", params: str = "    city: {type: string}\n",
         ) -> Path:
    (root / "capabilities").mkdir(parents=True, exist_ok=True)
    (root / "capabilities" / "weather.yaml").write_text(API.format(code=code, params=params))
    return root


def test_compile_names_the_files_it_wrote(tmp_path: Path) -> None:
    root = tree(tmp_path)
    done = run_capc("compile", cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "capc: wrote build/manifest.json\n"
    key = tmp_path / "key.pem"
    public_key = run_capc("keygen", "-o", str(key), cwd=root).stdout.strip()
    signed = run_capc("compile", "--sign-key", str(key), "--format", "json", cwd=root)
    assert signed.returncode == 0, signed.stderr
    assert (f"capc: wrote build/manifest.json and its signature build/manifest.json.sig "
            f"({public_key})") in signed.stderr
    json.loads(signed.stdout)  # the machine format keeps stdout to itself


def test_keygen_prints_the_public_key_of_an_existing_key(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    public_key = run_capc("keygen", "-o", str(key), cwd=tmp_path).stdout.strip()
    again = run_capc("keygen", "--public-key-of", str(key), cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.strip() == public_key
    assert key.read_text() not in again.stdout + again.stderr
    both = run_capc("keygen", "-o", "x.pem", "--public-key-of", str(key), cwd=tmp_path)
    assert both.returncode == 2 and not (tmp_path / "x.pem").exists()
    neither = run_capc("keygen", cwd=tmp_path)
    assert neither.returncode == 2 and "--public-key-of" in neither.stderr
    bad = run_capc("keygen", "--public-key-of", str(tmp_path / "missing.pem"), cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_a_code_that_fails_its_pattern_gets_did_you_mean(tmp_path: Path) -> None:
    done = run_capc("validate", cwd=tree(tmp_path, code="Get-Weather"))
    assert done.returncode == 1
    assert "did you mean 'get_weather'?" in done.stderr


def test_an_enum_default_error_lists_the_values(tmp_path: Path) -> None:
    params = ("    units:\n      type: string\n      enum: [metric, imperial]\n"
              "      default: kelvin\n")
    done = run_capc("validate", cwd=tree(tmp_path, params=params))
    assert done.returncode == 1
    assert 'default "kelvin" is not one of the enum values: "metric", "imperial"' in done.stderr


def test_required_with_a_default_is_a_warning(tmp_path: Path) -> None:
    params = "    units:\n      type: string\n      required: true\n      default: metric\n"
    root = tree(tmp_path, params=params)
    done = run_capc("validate", cwd=root)
    assert done.returncode == 0
    assert "capabilities/weather.yaml:13:17: warning[api-required-default]" in done.stderr
    assert run_capc("validate", "--strict", cwd=root).returncode == 1


def test_the_stale_hint_says_commit_only_when_git_tracks_the_manifest(tmp_path: Path) -> None:
    root = tree(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("build/\n")
    missing = run_capc("compile", "--check", cwd=root)
    assert "run `capc compile` first" in missing.stderr
    assert "make compile" not in missing.stderr  # no Makefile here
    assert run_capc("compile", cwd=root).returncode == 0
    tree(root, params="    town: {type: string}\n")
    ignored = run_capc("compile", "--check", cwd=root)
    assert ignored.returncode == 1 and "commit" not in ignored.stderr
    (root / ".gitignore").write_text("")
    tracked = run_capc("compile", "--check", cwd=root)
    assert tracked.returncode == 1 and "and commit it" in tracked.stderr


def test_the_markdown_diff_shows_json_values_not_python_reprs(tmp_path: Path) -> None:
    mcp = ("apiVersion: capc/v1\nkind: Capability\ncode: wiki\nname: Wiki\ntype: mcp\n"
           "options:\n  server_label: wiki\n  server_url: https://wiki.example.com/mcp\n"
           "  require_approval: {approval}\n")
    (tmp_path / "capabilities").mkdir()
    for name, approval in (("old", "always"), ("new", "never")):
        (tmp_path / "capabilities" / "wiki.yaml").write_text(mcp.format(approval=approval))
        assert run_capc("compile", "-o", f"{name}.json", cwd=tmp_path).returncode == 0
    shown = run_capc("diff", "old.json", "new.json", "--format", "markdown", cwd=tmp_path)
    assert 'relaxed from "always" to "never"' in shown.stdout
    assert "'always'" not in shown.stdout and "None" not in shown.stdout
