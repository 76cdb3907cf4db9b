"""``capc import openapi`` checks the tree it would leave with the compile ``capc compile``
runs (``compiler.tree_compile``): template variables, registrations, the lock, allowed
networks and ``--strict`` give the import the verdict the next compile gives.

Each case is a project; the import runs in it through the CLI. Accepted: the import
exits 0 and so does the ``capc compile`` after it. Refused: the import writes nothing, and
the files it would have written (made by the same import in a bare folder, which has none
of the project's options) make ``capc compile`` in the project fail with the same codes.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.adoption.host_app import write_host_app
from tests.authoring.openapi.helpers import document, get, write
from tests.support.capc import run_capc
from tests.support.paths import CASES

OUT = "capabilities/pets"

TEMPLATE = """apiVersion: capc/v1
kind: Capability
code: {code}
name: "{{{{ pets_title }}}}"
type: api
options:
  name: {code}
  description: Pets, as the template says
  method: GET
  url: https://pets.example.com/v1/pets
"""

REGISTRATION = '''\
from langchain_core.tools import tool


@tool("find_pets")
def listed(kind: str) -> str:
    """List the pets of a kind."""
    return "none"


def register(registry_fn):
    registry_fn("pets", [listed], name="Pets", description="Pets of the app")
'''


def pets(servers: list[str], secured: bool = False) -> dict[str, Any]:
    """A one-operation document (``listPets``) on ``servers``."""
    extra: dict[str, Any] = {}
    if secured:
        extra = {"security": [{"token": []}],
                 "components": {"securitySchemes": {"token": {"type": "http",
                                                               "scheme": "bearer"}}}}
    data = document({"/pets": {"get": get("listPets", summary="List pets")}}, **extra)
    data["servers"] = [{"url": url} for url in servers]
    return data


def _project(root: Path, capc: str, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f"[project]\nname = 'app'\n\n[tool.capc]\n{capc}")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "capabilities").mkdir(exist_ok=True)
    return root


def templated(root: Path, code: str) -> Path:
    return _project(root, 'vars = ["vars.yaml"]\n', {
        "vars.yaml": "pets_title: Pets\n",
        f"capabilities/{code}.yaml.j2": TEMPLATE.format(code=code)})


def registered(root: Path, code: str) -> Path:
    """A project whose registrations register the internal code ``pets``, and whose tree
    has an internal capability ``code``."""
    write_host_app(root)
    internal = f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: Pets\ntype: internal\n"
    return _project(root, 'registrations = ["myapp.pets:register"]\n',
                    {"myapp/pets.py": REGISTRATION, "capabilities/pets.yaml": internal})


def locked(root: Path, case: str) -> Path:
    """A project with a golden case's lock and MCP capability (pinned, or naming a tool
    the lock does not pin)."""
    source = CASES / case
    return _project(root, "", {
        "capc.lock": (source / "capc.lock").read_text(),
        "capabilities/calc.yaml": (source / "src" / "calc.yaml").read_text()})


def networked(root: Path, allowed: str) -> Path:
    return _project(root, f'allowed_networks = ["{allowed}"]\n', {})


def strict(root: Path, value: str) -> Path:
    return _project(root, f"strict = {value}\n", {})


# (name, the project with its options, the document's servers, whether it is secured,
#  the import's (and the compile's) verdict)
CASES_: list[tuple[str, Callable[[Path], Path], list[str], bool, bool]] = [
    ("template-clash", lambda root: templated(root, "list_pets"),
     ["https://pets.example.com/v1"], False, False),
    ("template-other-code", lambda root: templated(root, "pets_index"),
     ["https://pets.example.com/v1"], False, True),
    ("registered-internal-code", lambda root: registered(root, "pets"),
     ["https://pets.example.com/v1"], False, True),
    ("internal-code-no-registration-provides", lambda root: registered(root, "pet"),
     ["https://pets.example.com/v1"], False, False),
    ("lock-pins-the-allowed-tools", lambda root: locked(root, "good/pinned-mcp"),
     ["https://pets.example.com/v1"], False, True),
    ("lock-lacks-an-allowed-tool", lambda root: locked(root, "bad/mcp-unpinned-tool"),
     ["https://pets.example.com/v1"], False, False),
    ("private-server-in-allowed-range", lambda root: networked(root, "10.20.0.0/16"),
     ["http://10.20.0.5/v1"], False, True),
    ("private-server-outside-allowed-range", lambda root: networked(root, "10.30.0.0/16"),
     ["http://10.20.0.5/v1"], False, False),
    ("strict-http-credential", lambda root: strict(root, "true"),
     ["http://pets.example.com/v1"], True, False),
    ("not-strict-http-credential", lambda root: strict(root, "false"),
     ["http://pets.example.com/v1"], True, True),
    ("strict-https-listed-after-http", lambda root: strict(root, "true"),
     ["http://pets.example.com/v1", "https://pets.example.com/v1"], True, True),
]


def _codes(text: str) -> set[str]:
    return set(re.findall(r"error\[([a-z0-9-]+)\]", text))


@pytest.mark.parametrize(("make", "servers", "secured", "accepted"),
                         [case[1:] for case in CASES_], ids=[case[0] for case in CASES_])
def test_the_import_gives_the_verdict_of_the_next_compile(
        tmp_path: Path, make: Callable[[Path], Path], servers: list[str], secured: bool,
        accepted: bool) -> None:
    root = make(tmp_path / "app")
    spec = write(root / "openapi", pets(servers, secured))
    imported = run_capc("import", "openapi", str(spec), "--operations", "listPets",
                        "-o", OUT, cwd=root)
    if accepted:
        assert imported.returncode == 0, imported.stderr
        compiled = run_capc("compile", cwd=root)
        assert compiled.returncode == 0, compiled.stderr
        return
    assert imported.returncode == 1, imported.stdout + imported.stderr
    assert not (root / OUT).exists()
    # What the import refused to write, made without the project's options, then compiled
    # in the project: the compile refuses it for the same reasons.
    bare = tmp_path / "bare"
    bare.mkdir()
    made = run_capc("import", "openapi", str(spec), "--operations", "listPets", "-o", "out",
                    "--allow-private-networks", cwd=bare)
    assert made.returncode == 0, made.stderr
    shutil.copytree(bare / "out", root / OUT)
    compiled = run_capc("compile", cwd=root)
    assert compiled.returncode == 1, compiled.stderr
    assert _codes(imported.stderr) == _codes(compiled.stderr) != set(), \
        (imported.stderr, compiled.stderr)


def test_https_is_preferred_and_named_in_the_summary(tmp_path: Path) -> None:
    root = strict(tmp_path, "true")
    spec = write(root / "openapi", pets(["http://pets.example.com/v1",
                                         "https://secure.pets.example.com/v1"], True))
    done = run_capc("import", "openapi", str(spec), "--all", "-o", OUT, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "server: server https://secure.pets.example.com/v1 chosen: https, listed after " \
           "http://pets.example.com/v1" in done.stdout
    data = yaml.safe_load((root / OUT / "list_pets.yaml").read_text())
    assert data["options"]["url"] == "https://secure.pets.example.com/v1/pets"


def test_a_protocol_relative_server_reads_as_https_with_a_note(tmp_path: Path) -> None:
    root = strict(tmp_path, "true")
    spec = write(root / "openapi", pets(["//pets.example.com/v1"], True))
    done = run_capc("import", "openapi", str(spec), "--all", "-o", OUT, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "read as https://pets.example.com/v1" in done.stdout
    data = yaml.safe_load((root / OUT / "list_pets.yaml").read_text())
    assert data["options"]["url"] == "https://pets.example.com/v1/pets"


def test_the_server_given_is_recorded_so_check_needs_no_flag(tmp_path: Path) -> None:
    root = strict(tmp_path, "false")
    spec = write(root / "openapi", pets(["/v1"]))
    refused = run_capc("import", "openapi", str(spec), "--all", "-o", OUT, cwd=root)
    assert refused.returncode == 1 and "--server" in refused.stderr
    done = run_capc("import", "openapi", str(spec), "--all", "-o", OUT,
                    "--server", "https://pets.example.com/v1", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "server: https://pets.example.com/v1 (--server, recorded" in done.stdout
    text = (root / OUT / "list_pets.yaml").read_text()
    assert "# Imported with --server https://pets.example.com/v1 " in text
    checked = run_capc("import", "openapi", str(spec), "-o", OUT, "--check", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    other = run_capc("import", "openapi", str(spec), "-o", OUT, "--check",
                     "--server", "https://other.example.com/v1", cwd=root)
    assert other.returncode == 1 and "other.example.com" in other.stdout


def test_a_server_that_a_header_comment_cannot_hold_is_refused(tmp_path: Path) -> None:
    root = strict(tmp_path, "false")
    spec = write(root / "openapi", pets(["/v1"]))
    for server in ("https://pets.example.com/v1\nkind: ToolOverride", "ftp://pets.example.com",
                   "pets.example.com/v1"):
        done = run_capc("import", "openapi", str(spec), "--all", "-o", OUT,
                        "--server", server, cwd=root)
        assert done.returncode == 2, (server, done.stderr)
        assert "error[openapi-server]" in done.stderr
        assert not (root / OUT).exists()


def test_check_is_clean_whatever_the_order_of_the_operations(tmp_path: Path) -> None:
    root = strict(tmp_path, "false")
    data = document({"/pets": {"get": get("listPets"), "post": get("createPet")},
                     "/stats": {"get": get("adminStats")}})
    spec = write(root / "openapi", data)
    done = run_capc("import", "openapi", str(spec), "--operations", "listPets", "adminStats",
                    "createPet", "-o", OUT, cwd=root)
    assert done.returncode == 0, done.stderr
    for order in (["listPets", "adminStats", "createPet"], ["createPet", "listPets",
                                                             "adminStats"], []):
        arguments = ["--operations", *order] if order else []
        checked = run_capc("import", "openapi", str(spec), *arguments, "-o", OUT, "--check",
                           cwd=root)
        assert checked.returncode == 0, (order, checked.stdout, checked.stderr)


def test_check_fails_when_the_regenerated_tree_would_not_compile(tmp_path: Path) -> None:
    root = strict(tmp_path, "false")
    spec = write(root / "openapi", pets(["http://pets.example.com/v1"], True))
    assert run_capc("import", "openapi", str(spec), "--all", "-o", OUT, cwd=root).returncode == 0
    checked = run_capc("import", "openapi", str(spec), "-o", OUT, "--check", "--strict",
                       cwd=root)
    assert checked.returncode == 1
    assert "error[plain-http-secret]" in checked.stderr
