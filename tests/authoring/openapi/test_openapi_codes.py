"""Each refusal of `capc import openapi` that no other test names, produced by a real
document through the command (tests/cli/test_every_code_has_a_bad_case.py links here)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.capc import run_capc

PETS = """\
openapi: 3.0.3
info: {title: Pets, version: "1.0"}
servers: [{url: "https://api.example.com/v1"}]
paths:
  /pets:
    get:
      operationId: listPets
      responses: {"200": {description: ok}}
"""


def _document(text: str) -> Callable[[Path], list[str]]:
    def write(root: Path) -> list[str]:
        (root / "api.yaml").write_text(text, encoding="utf-8")
        return ["import", "openapi", "api.yaml", "--all", "-o", "out"]
    return write


def _folder(root: Path) -> list[str]:
    (root / "api.yaml").mkdir()
    return ["import", "openapi", "api.yaml", "--all", "-o", "out"]


def _selector(root: Path) -> list[str]:
    (root / "api.yaml").write_text(PETS, encoding="utf-8")
    return ["import", "openapi", "api.yaml", "--operations", "nope", "-o", "out"]


DEEP = ('openapi: 3.0.3\ninfo: {title: T, version: "1"}\nx: ' + "{a: " * 300 + "1"
        + "}" * 300 + "\npaths: {}\n")

CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "openapi-no-server": (_document(PETS.replace(PETS.splitlines()[2], "")), "api.yaml:1:1"),
    "openapi-read": (_folder, "api.yaml:1:1"),
    "openapi-selector": (_selector, "'nope' matches no operation"),
    "openapi-server": (_document(PETS.replace('{url: "https://api.example.com/v1"}',
                                              "{description: x}")), "api.yaml:3:11"),
    "openapi-structure": (_document("- a list\n"), "api.yaml:1:1"),
    "openapi-too-deep": (_document(DEEP), "api.yaml:3:"),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_the_refusal_is_located_and_writes_nothing(tmp_path: Path, code: str) -> None:
    setup, where = CASES[code]
    done = run_capc(*setup(tmp_path), cwd=tmp_path, extra_env={"CAPC_NO_CACHE": "1"})
    # A SPEC that cannot be read is an I/O error (2), as on every command (docs/cli.md).
    assert done.returncode == (2 if code == "openapi-read" else 1), done.stderr
    assert f"error[{code}]" in done.stderr and where in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
