"""A stored plugin catalogue is served only while nothing its discovery read changed.

compiler/cache/plugin_catalogue.py beside compiler.plugins.discover_catalogue: after each
kind of change the compile with the cache gives exactly what a compile without it gives
(exit code, printed lines, manifest bytes), and a discovery runs again; with no change
none runs. Discoveries are counted by the project's registration module, which appends a
line to a log outside the project each time it is imported (a discovery child imports it).
Every path of the project is given one fixed, old time stamp before the cached compiles,
so a change is seen through what else the file system says of it (size, change time).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from compiler.cache.plugin_catalogue import RACY_NS
from tests.adoption.host_app import REGISTRATIONS, internal_capability, write_host_app
from tests.support.capc import run_capc

pytestmark = pytest.mark.fastpath

OLD = 1_700_000_000  # 2023-11-14: long before any test runs


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = write_host_app(tmp_path / "acme")
    log = tmp_path / "log" / "imports.txt"
    log.parent.mkdir()
    counted = root / "myapp" / "crm.py"
    counted.write_text(f"with open({str(log)!r}, 'a') as _log:\n    _log.write('x')\n"
                       + counted.read_text())
    (root / "capabilities" / "internal").mkdir(parents=True)
    for code in ("base", "rag", "crm"):
        (root / "capabilities" / "internal" / f"{code}.yaml").write_text(
            internal_capability(code))
    (root / "pyproject.toml").write_text(
        f"[project]\nname = 'acme'\n\n[tool.capc]\nregistrations = {REGISTRATIONS}\n")
    return root


def _discoveries(app: Path) -> int:
    log = app.parent / "log" / "imports.txt"
    return len(log.read_text()) if log.exists() else 0


def _backdate(root: Path) -> None:
    """Every path under ``root`` (and ``root``) to the same old time stamp."""
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (OLD, OLD))
        os.utime(folder, (OLD, OLD))


def _outcome(app: Path, cache: Path, **env: str) -> tuple[int, str, str, bytes]:
    done = run_capc("compile", cwd=app, extra_env={"CAPC_CACHE_DIR": str(cache), **env})
    manifest = app / "build" / "manifest.json"
    content = manifest.read_bytes() if manifest.exists() else b""
    manifest.unlink(missing_ok=True)
    return done.returncode, done.stdout, done.stderr, content


def _uncached(app: Path, **env: str) -> tuple[int, str, str, bytes]:
    return _outcome(app, app.parent / "unused", CAPC_NO_CACHE="1", **env)


def _settled(app: Path, cache: Path) -> tuple[int, str, str, bytes]:
    """A compile, then every time stamp made old, then a compile that stores the catalogue.

    The first compile may write files outside the project that discovery reads (bytecode
    of modules imported for the first time on a fresh checkout): the wait lets them age
    past the window in which a change keeps a catalogue from being stored, so the second
    compile stores it whatever the machine's speed (a wait for a file's age, not a race).
    """
    _outcome(app, cache)
    _backdate(app)
    time.sleep(RACY_NS / 1e9 + 0.2)
    return _outcome(app, cache)


def test_an_unchanged_project_discovers_once(app: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    stored = _settled(app, cache)
    assert stored[0] == 0, stored[2]
    before = _discoveries(app)
    assert _outcome(app, cache) == stored
    assert _outcome(app, cache) == stored
    assert _discoveries(app) == before  # served from the stored catalogue
    assert stored == _uncached(app)


@pytest.mark.parametrize("change", ["same-size-edit", "shadowing-package", "new-code"])
def test_a_changed_registration_is_discovered_again(app: Path, tmp_path: Path,
                                                    change: str) -> None:
    cache = tmp_path / "cache"
    _settled(app, cache)
    module = app / "myapp" / "crm.py"
    if change == "same-size-edit":  # same size, same (old) time stamp: only ctime differs
        module.write_text(module.read_text().replace('"Contacts"', '"Contactz"'))
    elif change == "shadowing-package":  # a package of the same name wins over the module
        package = app / "myapp" / "crm"
        package.mkdir()
        (package / "__init__.py").write_text(module.read_text().replace(
            '"Contacts"', '"People"'))
    else:  # the registration now registers a code the tree does not define
        module.write_text(module.read_text().replace('registry_fn("crm"', 'registry_fn("crn"'))
    _backdate(app)
    before = _discoveries(app)
    cached = _outcome(app, cache)
    assert _discoveries(app) == before + 1
    assert cached == _uncached(app)
    assert cached != _settled_copy_outcome(change)


def _settled_copy_outcome(change: str) -> tuple[int, str, str, bytes]:
    # The outcome every change must move away from is the unchanged project's, which a
    # compile without the change shows; computed in a fresh project of the same text.
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        fresh = write_host_app(Path(folder) / "acme")
        (fresh / "capabilities" / "internal").mkdir(parents=True)
        for code in ("base", "rag", "crm"):
            (fresh / "capabilities" / "internal" / f"{code}.yaml").write_text(
                internal_capability(code))
        (fresh / "pyproject.toml").write_text(
            f"[project]\nname = 'acme'\n\n[tool.capc]\nregistrations = {REGISTRATIONS}\n")
        return _uncached(fresh)


def test_the_environment_is_part_of_the_key(app: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _settled(app, cache)
    before = _discoveries(app)
    cached = _outcome(app, cache, CAPC_TEST_SETTING="1")
    assert _discoveries(app) == before + 1
    assert cached == _uncached(app, CAPC_TEST_SETTING="1")


def test_a_failed_discovery_is_never_stored(app: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _settled(app, cache)
    (app / "myapp" / "tool_registrations.py").write_text("raise RuntimeError('no db')\n")
    _backdate(app)
    before = _discoveries(app)
    first, second = _outcome(app, cache), _outcome(app, cache)
    assert _discoveries(app) == before + 2  # myapp.crm:register is imported each time
    assert first == second == _uncached(app)
    assert first[0] == 1 and "no db" in first[2]


def test_a_recent_change_is_not_stored(app: Path, tmp_path: Path) -> None:
    """Time stamps of the last two seconds cannot tell a rewrite within the same tick
    apart: the catalogue of such a tree is discovered again next time."""
    cache = tmp_path / "cache"
    _settled(app, cache)
    (app / "myapp" / "crm.py").touch()  # now: recent
    before = _discoveries(app)
    _outcome(app, cache)
    _outcome(app, cache)
    assert _discoveries(app) >= before + 2 or _discovered_late(app, before)


def _discovered_late(app: Path, before: int) -> bool:
    # On a machine so slow that two seconds passed between the two compiles, the second
    # one may store it; the first never does.
    return _discoveries(app) == before + 1


def test_the_recorder_hears_reads_not_writes(tmp_path: Path) -> None:
    script = (
        "import json, os, sys\n"
        "from compiler.cache.read_recorder import ReadRecorder\n"
        "recorder = ReadRecorder.installed()\n"
        f"open({str(tmp_path / 'read.txt')!r}).read()\n"
        f"open({str(tmp_path / 'written.txt')!r}, 'w').write('x')\n"
        f"os.close(os.open({str(tmp_path / 'created.txt')!r}, os.O_CREAT | os.O_WRONLY))\n"
        f"os.listdir({str(tmp_path / 'listed')!r})\n"
        "print(json.dumps(recorder.record([], {})))\n")
    (tmp_path / "read.txt").write_text("r")
    (tmp_path / "listed").mkdir()
    done = subprocess.run([os.sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[2])
    import json

    record = json.loads(done.stdout)
    assert str(tmp_path / "read.txt") in record["files"]
    assert not {str(tmp_path / "written.txt"), str(tmp_path / "created.txt")} & set(
        record["files"])
    assert str(tmp_path / "listed") in record["folders"]
    assert record["untracked"] is False
