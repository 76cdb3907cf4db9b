"""docs/parameters.md is executable: every YAML block compiles, every example call sends
exactly the request shown (against a real server on 127.0.0.1), and the shown
``capc validate --format json`` entry is what capc reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.doc_blocks import code_blocks
from tests.support.paths import REPO_ROOT
from tests.support.runtime import RecordingServer
from tests.support.structured import call_tool, manifest_file

PAGE = REPO_ROOT / "docs" / "parameters.md"
ORIGIN = "https://api.example.com"


def examples() -> list[tuple[str, str, dict, str]]:
    """``(code, yaml, arguments, shown request)`` per shape, in page order."""
    blocks = [block for block in code_blocks(PAGE) if block.skip is None]
    found = []
    for index, block in enumerate(blocks):
        if block.lang != "yaml":
            continue
        arguments, request = blocks[index + 1], blocks[index + 2]
        assert (arguments.lang, request.lang) == ("json", "http"), block.line
        code = re.search(r"^code: (\w+)$", block.text, re.M)
        assert code is not None
        found.append((code[1], block.text, json.loads(arguments.text), request.text))
    return found


def test_the_page_has_one_worked_example_per_shape() -> None:
    assert [code for code, *_ in examples()] == [
        "list_issues", "search_issues", "create_order", "checkout", "track", "add_labels"]


@pytest.mark.parametrize("example", examples(), ids=lambda example: example[0])
async def test_each_example_sends_the_request_shown(
        tmp_path: Path, server: RecordingServer, example: tuple[str, str, dict, str]) -> None:
    code, text, arguments, shown = example
    path = manifest_file(tmp_path, text.replace(ORIGIN, "BASE"), server.base_url)
    answer = await call_tool(path, code, arguments)
    assert not answer.startswith("Error"), answer
    request_line, _, body = shown.rstrip("\n").partition("\n\n")
    received = server.last()
    assert f"{received.method} {received.raw_path}" == request_line
    assert received.body == body.encode()


def test_the_shown_validate_entry_is_what_capc_reports(tmp_path: Path) -> None:
    (tmp_path / "capabilities").mkdir()
    for code, text, _, _ in examples():
        (tmp_path / "capabilities" / f"{code}.yaml").write_text(text)
    (command,) = [block.text.strip() for block in code_blocks(PAGE) if block.lang == "sh"]
    result = run_capc(*command.split()[1:], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    reported = {entry["tool"]: entry for entry in json.loads(result.stdout)
                if entry["code"] == "strict-compatibility"}
    (shown,) = [block.text for block in code_blocks(PAGE) if block.lang == "text"]
    entry = json.loads(shown.replace(", ...}}", "}}").replace(', "...": "..."', ""))
    actual = reported[entry["tool"]]
    assert actual["strict"] == entry["strict"]
    assert actual["providers"]["openai"] == entry["providers"]["openai"]
    assert reported["add_labels"]["strict"] is True
