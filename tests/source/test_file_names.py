"""A source file whose name is not UTF-8 is refused with a located error, not a crash.

Its name comes from the directory listing with surrogateescape, so the manifest (which
records where each tool comes from) could not be written as UTF-8: before, a compile of
such a tree ended in "capc: internal error (UnicodeEncodeError ...)", exit 2.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.capc import run_capc_process

pytestmark = pytest.mark.independent

ROOT = Path(__file__).resolve().parents[2]
_API = ("apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code}\ntype: api\n"
        "options:\n  name: {code}_tool\n  description: d\n  url: https://api.example.com/v1\n")


@pytest.mark.parametrize("output_format", ["text", "json", "github"])
@pytest.mark.parametrize("name", [b"caf\xe9.yaml", b"d\xff/a.yaml", b"t\xe9.yaml.j2"])
def test_a_name_that_is_not_utf8_is_a_located_error(name: bytes, output_format: str,
                                                    tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "b.yaml").write_text(_API.format(code="b"))
    target = os.path.join(os.fsencode(source), name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as stream:
        stream.write(_API.format(code="a").encode())
    done = run_capc_process("compile", "src", "-o", "m.json", "--format", output_format,
                            cwd=tmp_path, extra_env={"CAPC_NO_CACHE": "1"}, text=False)
    shown = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 1, shown
    assert "file-name" in shown and "not valid UTF-8" in shown
    assert "internal error" not in shown and "Traceback" not in shown
    assert not (tmp_path / "m.json").exists()
