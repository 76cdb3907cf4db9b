"""Issue 20 "one reader": the same damaged manifest is refused the same way, with the same
exit code, by every command that reads one and by ``load_manifest``.

The damage is done the way an attacker or a bad merge would: the JSON edited and the
digest recomputed, so only the reader's structural checks can catch it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import ToolRegistry, load_manifest
from compiler.runtime.errors import ManifestError
from tests.support.capc import run_capc
from tests.support.runtime import seal
from tests.support.trees import CRM, WEATHER, compile_tree, write_tree

pytestmark = pytest.mark.independent

PROFILES = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [get_weather, crm_*]
deferred: [crm_*]
"""


def _profile_names_unknown_code(document: dict[str, Any]) -> None:
    document["profiles"][0]["capabilities"].append("no_such_code")


def _profile_defers_unknown_code(document: dict[str, Any]) -> None:
    document["profiles"][0]["capabilities"].append("ghost")
    document["profiles"][0]["deferred"].append("ghost")


def _profile_names_code_twice(document: dict[str, Any]) -> None:
    document["profiles"][0]["capabilities"].append("get_weather")


def _duplicate_code(document: dict[str, Any]) -> None:
    document["capabilities"].append(copy.deepcopy(document["capabilities"][0]))


def _bad_version(document: dict[str, Any]) -> None:
    document["manifest_version"] = 999


DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "profile-unknown-code": _profile_names_unknown_code,
    "profile-deferred-unknown-code": _profile_defers_unknown_code,
    "profile-code-twice": _profile_names_code_twice,
    "duplicate-code": _duplicate_code,
    "bad-version": _bad_version,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("refusals")
    write_tree(root, WEATHER, CRM, profiles=PROFILES)
    compile_tree(root)
    return root


def damaged(project: Path, name: str) -> Path:
    document = json.loads((project / "build" / "manifest.json").read_text())
    DAMAGE[name](document)
    path = project / f"{name}.json"
    path.write_text(json.dumps(seal(document), indent=2))
    return path


def commands(path: Path, good: Path) -> dict[str, list[str]]:
    return {
        "docs": ["docs", "-m", str(path), "-o", str(path.with_suffix(".md"))],
        "explain": ["explain", "get_weather", "-m", str(path)],
        "diff-new": ["diff", str(good), str(path)],
        "diff-old": ["diff", str(path), str(good)],
        "budget": ["budget", "-m", str(path)],
    }


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_every_reader_refuses_the_damage_with_exit_1(project: Path, name: str) -> None:
    path = damaged(project, name)
    good = project / "build" / "manifest.json"
    outcomes = {}
    for command, args in commands(path, good).items():
        result = run_capc(*args, cwd=project)
        outcomes[command] = (result.returncode, "manifest refused" in result.stderr)
        assert "Traceback" not in result.stderr
    assert outcomes == dict.fromkeys(outcomes, (1, True))
    with pytest.raises(ManifestError):
        load_manifest(path, registry=ToolRegistry())


def test_missing_manifest_is_exit_2_everywhere(project: Path) -> None:
    missing = project / "nowhere.json"
    good = project / "build" / "manifest.json"
    codes = {command: run_capc(*args, cwd=project).returncode
             for command, args in commands(missing, good).items()}
    assert codes == dict.fromkeys(codes, 2)
