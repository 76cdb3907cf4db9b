"""docs/tool-tests.md, run as a user would copy it: every file block written, every
command run, the recorded case and the failure compared with what the page shows.

The one substitution: the page's API (https://api.weather.example) is a real HTTP server
on 127.0.0.1 here, so its URL is swapped in every block, and the project allows exactly
that loopback range (127.0.0.0/8) so the compile lets it through, as a project would
allow its own internal range.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.support.capc import run_capc
from tests.support.doc_blocks import FILE_LINE, code_blocks
from tests.support.paths import REPO_ROOT
from tests.support.runtime import recording_server
from tests.tooltests.conftest import SECRET, weather_reply

PAGE = REPO_ROOT / "docs" / "tool-tests.md"
PAGE_API = "https://api.weather.example"
ALLOW_LOOPBACK = '\nallowed_networks = ["127.0.0.0/8"]\n'


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    blocks = code_blocks(PAGE)
    (tmp_path / "pyproject.toml").write_text("[tool.capc]" + ALLOW_LOOPBACK)
    with recording_server() as server:
        server.responder = weather_reply
        shown_case = next(b.text for b in blocks if b.lang == "yaml"
                          and b.text.startswith("apiVersion: capc/v1\nkind: ToolTest"))
        outputs: list[str] = []
        ran = 0
        for block in blocks:
            text = block.text.replace(PAGE_API, server.base_url)
            target = FILE_LINE.match(text)
            if target is not None:
                extra = ALLOW_LOOPBACK if target[1] == "pyproject.toml" else ""
                path = tmp_path / target[1]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text + extra, encoding="utf-8")
            elif block.lang == "sh":
                for line in text.splitlines():
                    command, _, comment = line.partition("  # ")
                    expected = 1 if comment.strip() == "exits 1" else 0
                    done = run_capc(*shlex.split(command)[1:], cwd=tmp_path,
                                    extra_env={"WEATHER_KEY": SECRET, "CAPC_NO_CACHE": "1"})
                    assert done.returncode == expected, (line, done.stderr)
                    outputs.append(done.stderr)
                    ran += 1
                    if command.startswith("capc record"):
                        recorded = (tmp_path / "capabilities" / "weather.test.yaml").read_text()
                        assert _without_date(recorded) == shown_case.replace(
                            PAGE_API, server.base_url)
            elif block.lang == "text":
                shown = block.text.strip().splitlines()
                assert all(line in outputs[-1] for line in shown), outputs[-1]
    assert ran == 4
    assert "tooltest-missing" not in outputs[-1]  # `untested: REASON` covers status
    assert SECRET not in "".join(outputs)


def _without_date(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.lstrip().startswith("date:"))
