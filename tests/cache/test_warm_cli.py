"""The warm path as a user runs it: ``capc compile`` in a project, in a child process, after
edits that change a cross-document fact, gives exactly what a compile without the cache
gives (exit code, stdout, stderr, manifest bytes); a damaged cache entry is a cold compile,
never a traceback.

Each state is compiled with the cache (on one cache folder along the sequence, then once
more, warm) and with ``CAPC_NO_CACHE=1``, in the same folder. The files' ages decide
whether the stat index trusts a signature (compiler/cache/tree_index.py): a project copied
just now is racy, so the first sequence waits the racy window out once, to use the index
for a no-change compile and for the edits after it.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.cache.read_recorder import RACY_NS
from tests.support.capc import run_capc_process
from tests.support.paths import CASES

Outcome = tuple[int, str, str, bytes | None]


def _compile(project: Path, cache: Path | None) -> Outcome:
    output = project / "build" / "manifest.json"
    output.unlink(missing_ok=True)
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("CAPC_")}
    # Outside the project: a key file under the working directory would not be used.
    environment["XDG_CACHE_HOME"] = str(project.parent / "xdg")
    if cache is None:
        environment["CAPC_NO_CACHE"] = "1"
    else:
        environment["CAPC_CACHE_DIR"] = str(cache)
    done = run_capc_process("compile", cwd=project, env=environment, text=False)
    stderr = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr
    return (done.returncode, done.stdout.decode("utf-8", "replace"), stderr,
            output.read_bytes() if output.exists() else None)


def _same(project: Path) -> None:
    cache = project.parent / "cache"
    cached = _compile(project, cache)
    assert list(cache.glob("*.tree")), "nothing was cached"
    warm = _compile(project, cache)
    uncached = _compile(project, None)
    assert cached == uncached
    assert warm == uncached


def _project(tmp_path: Path, case: str) -> Path:
    project = tmp_path / "project"
    shutil.copytree(CASES / "good" / case, project)
    (project / "pyproject.toml").write_text("[tool.capc]\nroots = [\"src\"]\n",
                                            encoding="utf-8")
    return project


def _replace(path: Path, old: str, new: str) -> None:
    content = path.read_text(encoding="utf-8")
    assert old in content, (path, old)
    path.write_text(content.replace(old, new, 1), encoding="utf-8")


PROFILE_EDITS: list[tuple[str, Callable[[Path], object]]] = [
    ("touch without change", lambda p: (p / "src" / "calc.yaml").write_bytes(
        (p / "src" / "calc.yaml").read_bytes())),
    ("a profile's budget", lambda p: _replace(p / "src" / "profiles.yaml", "tools: 40",
                                              "tools: 1")),
    ("a profile naming a deleted capability", lambda p: (p / "src" / "calc.yaml").unlink()),
    ("[tool.capc] options", lambda p: (p / "pyproject.toml").write_text(
        "[tool.capc]\nroots = [\"src\"]\nstrict = true\n", encoding="utf-8")),
    ("the lock", lambda p: _replace(p / "capc.lock", "Add two integers.", "Add two ints.")),
    ("the lock removed", lambda p: (p / "capc.lock").unlink()),
]


def test_profile_lock_and_option_edits_give_the_uncached_outcome(tmp_path: Path) -> None:
    project = _project(tmp_path, "profiles")
    _same(project)
    time.sleep(RACY_NS / 1e9 + 0.2)  # a file's age, not a race: the index now trusts them
    _same(project)
    for _, edit in PROFILE_EDITS:
        edit(project)
        _same(project)


def _api(code: str, tool: str) -> str:
    return (f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code}\ntype: api\n"
            f"options:\n  name: {tool}\n  description: d\n"
            "  url: https://api.example.com/v1/x\n")


def test_a_tool_renamed_to_clash_gives_the_uncached_outcome(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "team").mkdir(parents=True)
    (project / "src" / "a.yaml").write_text(_api("a", "first"), encoding="utf-8")
    (project / "src" / "team" / "b.yaml").write_text(_api("b", "second"), encoding="utf-8")
    (project / "pyproject.toml").write_text("[tool.capc]\nroots = [\"src\"]\n",
                                            encoding="utf-8")
    _same(project)
    (project / "src" / "a.yaml").write_text(_api("a", "second"), encoding="utf-8")
    _same(project)
    (project / "src" / "a.yaml").write_text(_api("a", "first"), encoding="utf-8")
    _same(project)


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_cache_entry_is_a_cold_compile(damage: str, tmp_path: Path) -> None:
    project = _project(tmp_path, "profiles")
    cache = tmp_path / "cache"
    expected = _compile(project, None)
    assert _compile(project, cache) == expected
    entries = sorted(cache.glob("*.*"))
    assert {entry.suffix for entry in entries} >= {".tree", ".index", ".files", ".checks"}
    for entry in entries:
        content = entry.read_bytes()
        entry.write_bytes(content[: len(content) // 2] if damage == "truncated"
                          else content[:-1] + bytes([content[-1] ^ 1]))
    assert _compile(project, cache) == expected
    assert _compile(project, cache) == expected


_REGISTRATIONS = """\
from langchain_core.tools import tool

from compiler.runtime import ToolRegistry

registry = ToolRegistry()


@tool("lookup_records")
def lookup_records(query: str) -> str:
    \"\"\"Look records up by a free-text query.\"\"\"
    return query


registry.register_tools({code!r}, [lookup_records], name={code!r}, description="Tools")
"""
_INTERNAL = ("apiVersion: capc/v1\nkind: Capability\ncode: records\nname: Records\n"
             "type: internal\n")


def test_a_changed_registration_module_gives_the_uncached_outcome(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "records.yaml").write_text(_INTERNAL, encoding="utf-8")
    (project / "project_tools.py").write_text(_REGISTRATIONS.format(code="records"),
                                              encoding="utf-8")
    (project / "pyproject.toml").write_text(
        "[tool.capc]\nroots = [\"src\"]\nregistrations = [\"project_tools\"]\n",
        encoding="utf-8")
    _same(project)
    (project / "project_tools.py").write_text(_REGISTRATIONS.format(code="other_records"),
                                              encoding="utf-8")
    _same(project)
