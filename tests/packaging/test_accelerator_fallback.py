"""`pip install capc` brings orjson and jsonschema-rs; without them capc must give the same
bytes. Each run here is a real `capc` process, once as installed and once with both
accelerators made unimportable by a meta-path blocker installed before capc starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import CASES, REPO_ROOT

pytestmark = pytest.mark.fastpath

ACCELERATORS = ("orjson", "jsonschema_rs")
BLOCKER = """\
import runpy, sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None

sys.meta_path.insert(0, Blocker())
sys.argv = ["capc", *sys.argv[1:]]
runpy.run_module("compiler", run_name="__main__")
"""


def _capc(cwd: Path, *args: str, blocked: bool) -> subprocess.CompletedProcess[bytes]:
    code = BLOCKER.format(blocked=set(ACCELERATORS) if blocked else set())
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                          timeout=120, env=None)


def test_the_accelerators_are_dependencies_of_a_default_install() -> None:
    import tomllib

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    names = {requirement.split(">")[0].split("=")[0] for requirement in project["dependencies"]}
    assert {"orjson", "jsonschema-rs"} <= names


def test_the_blocker_really_blocks(tmp_path: Path) -> None:
    probe = BLOCKER.replace('runpy.run_module("compiler", run_name="__main__")',
                            "import orjson")
    result = subprocess.run([sys.executable, "-c", probe.format(blocked={"orjson"})],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "(blocked)" in result.stderr


@pytest.mark.parametrize("tree", ["shipped", "good/multi-document", "good/composition",
                                  "bad/schema-unknown-key", "bad/schema-enum",
                                  "bad/schema-required-and-type"])
def test_compile_without_accelerators_gives_the_same_bytes(tree: str, tmp_path: Path) -> None:
    if tree == "shipped":
        cwd, source = REPO_ROOT, "capabilities"
    else:
        cwd, source = CASES / tree, "src"
    outputs = {}
    for blocked in (False, True):
        out = tmp_path / f"manifest-{blocked}.json"
        result = _capc(cwd, "compile", source, "-o", str(out), "--no-cache", blocked=blocked)
        assert b"Traceback" not in result.stderr
        outputs[blocked] = (result.returncode, result.stderr,
                            out.read_bytes() if out.exists() else None)
    assert outputs[True] == outputs[False]


def test_validate_json_reports_are_identical_without_accelerators() -> None:
    case = CASES / "bad" / "schema-api-options-typo"
    reports = [_capc(case, "validate", "src", "--format", "json", "--no-cache", blocked=b).stdout
               for b in (False, True)]
    assert reports[0] == reports[1] and json.loads(reports[0])


def test_loading_the_manifest_without_orjson_gives_the_same_entries(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    assert _capc(REPO_ROOT, "compile", "-o", str(out), blocked=False).returncode == 0
    program = ("import json, sys\nfrom compiler.runtime import load_manifest\n"
               f"m = load_manifest({str(out)!r})\n"
               "print(json.dumps([repr(m.capability(c)) for c in m.codes()] + [m.digest]))")
    seen = []
    for blocked in (False, True):
        code = BLOCKER.format(blocked=set(ACCELERATORS) if blocked else set()).replace(
            'sys.argv = ["capc", *sys.argv[1:]]\nrunpy.run_module("compiler", run_name="__main__")',
            program)
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        seen.append(result.stdout)
    assert seen[0] == seen[1] and json.loads(seen[0])
