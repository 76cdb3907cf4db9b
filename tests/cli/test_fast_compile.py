"""``capc compile`` in its common forms runs without click (``compiler.cli.fast_compile``): the
same parse as click's, and the same exit code, output and manifest as the click path."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.cli import cli
from compiler.cli.compiling import compile_command
from compiler.cli.entry import run
from compiler.cli.fast_compile import CommonCompile, common_compile, run_common_compile
from tests.support.paths import REPO_ROOT

# What click passes compile_command for every flag a common line leaves out.
CLICK_DEFAULTS: dict[str, Any] = {
    "sign_key": None, "variables": (), "strict": None, "output_format": "text",
    "allow_private_networks": None, "use_plugins": None, "no_cache": False,
    "cache_dir": None, "lock_file": None, "allowed_networks": ()}

TOKENS = ["-o", "--output", "--output=out.json", "--output=", "--output=-x", "-o=x", "-oz",
          "--check", "--check=1", "--checks", "-", "--", "-h", "--help", "--strict",
          "--vars", "--outputs", "src", "a b", "", "é", "-1", "compile", "-\x1b"]


def test_the_common_lines_are_taken() -> None:
    assert common_compile(["compile"], {}) == CommonCompile((), None, False)
    assert common_compile(["compile", "a", "-o", "m.json", "b", "--check"], {}) == \
        CommonCompile(("a", "b"), "m.json", True)
    assert common_compile(["compile", "--output=m.json", "a"], {}) == \
        CommonCompile(("a",), "m.json", False)


@pytest.mark.parametrize("arguments", [
    [], ["validate"], ["compile", "--strict"], ["compile", "-o"], ["compile", "-o", "-x"],
    ["compile", "-o", "a", "--output", "b"], ["compile", "--check", "--check"],
    ["compile", "--help"], ["compile", "-"], ["compile", "--", "a"], ["--version"]])
def test_any_other_line_is_left_to_click(arguments: list[str]) -> None:
    assert common_compile(arguments, {}) is None


def test_shell_completion_and_misconfigured_streams_are_left_to_click(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert common_compile(["compile"], {"_CAPC_COMPLETE": "bash_source"}) is None
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert common_compile(["compile"], {}) is None
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # no encoding: click wraps it
    assert common_compile(["compile"], {}) is None


@given(st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=7))
def test_a_line_taken_is_the_line_click_parses(tail: list[str]) -> None:
    call = common_compile(["compile", *tail], {})
    if call is None:
        return  # click parses it, as before
    context = compile_command.make_context("compile", list(tail))
    assert context.params == {**CLICK_DEFAULTS, "sources": call.sources,
                              "output": call.output, "check": call.check}


@given(st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=7))
def test_a_line_click_refuses_is_never_taken(tail: list[str]) -> None:
    try:
        compile_command.make_context("compile", list(tail))
    except (click.ClickException, click.exceptions.Exit):
        assert common_compile(["compile", *tail], {}) is None


def _streams() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    # Real text streams with an encoding, as a console's are (StringIO has none).
    return (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True),
            io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True))


def _text(stream: io.TextIOWrapper) -> str:
    # The temporary file a failed write names has a random part.
    text = stream.buffer.getvalue().decode()  # type: ignore[attr-defined]
    return re.sub(r"\.[0-9a-f]{12}\.tmp", ".RANDOM.tmp", text)


def _both(arguments: list[str], monkeypatch: pytest.MonkeyPatch, output: Path | None,
          before: bytes | None = None) -> Iterator[tuple[int, str, str, bytes | None]]:
    """Exit code, stdout, stderr and the output file, by click and then by the fast path."""
    for fast in (False, True):
        if output is not None:
            output.unlink(missing_ok=True)
            if before is not None:
                output.write_bytes(before)
        out, err = _streams()
        with monkeypatch.context() as patch:
            patch.setattr(sys, "stdout", out)
            patch.setattr(sys, "stderr", err)
            if fast:
                call = common_compile(arguments, {})
                assert call is not None
                code = run_common_compile(call)
            else:
                code = run(cli, arguments)
        written = output.read_bytes() if output is not None and output.is_file() else None
        yield code, _text(out), _text(err), written


CASES = ["good/api-bindings", "bad/api-body-on-get", *sorted(
    f"hostile/{case.name}" for case in (REPO_ROOT / "tests" / "cases" / "hostile").iterdir())[:3]]


@pytest.mark.parametrize("case", CASES)
def test_a_compile_says_and_writes_what_clicks_does(case: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO_ROOT / "tests" / "cases" / case / "src", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAPC_NO_CACHE", "1")
    output = tmp_path / "out" / "m.json"
    by_click, by_fast = _both(["compile", "src", "-o", str(output)], monkeypatch, output)
    assert by_fast == by_click
    if by_click[0] == 0:  # --check, fresh and stale
        fresh = by_click[3]
        for before in (fresh, b"{}\n"):
            checked = list(_both(["compile", "--check", "src", f"--output={output}"],
                                 monkeypatch, output, before))
            assert checked[1] == checked[0]
            assert checked[0][0] == (0 if before == fresh else 1)


def test_a_missing_source_and_an_unwritable_output_fail_as_with_click(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO_ROOT / "tests" / "cases" / "good" / "api-bindings" / "src",
                    tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAPC_NO_CACHE", "1")
    (tmp_path / "taken").mkdir()
    for arguments, code in ((["compile", "missing"], 2), (["compile", "src", "-o", "taken"], 2)):
        by_click, by_fast = _both(arguments, monkeypatch, None)
        assert by_fast == by_click and by_click[0] == code, by_click


@pytest.mark.parametrize("failure", [KeyboardInterrupt(), EOFError(),
                                     BrokenPipeError(errno.EPIPE, "Broken pipe"),
                                     RuntimeError("boom")])
def test_interrupts_and_failures_end_as_with_click(failure: BaseException, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object, **__: object) -> None:
        raise failure

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("compiler.cli.writing.compile_tree", fail)
    by_click, by_fast = _both(["compile", "src"], monkeypatch, None)
    assert by_fast == by_click
    assert by_click[0] == (2 if isinstance(failure, RuntimeError) else 1)


def test_the_console_entry_point_compiles_without_importing_click(tmp_path: Path) -> None:
    shutil.copytree(REPO_ROOT / "tests" / "cases" / "good" / "api-bindings" / "src",
                    tmp_path / "src")
    program = ("import atexit, json, sys\n"
               "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules "
               "if m == 'click' or m.startswith(('click.', 'compiler.cli.'))))))\n"
               "sys.argv = ['capc', 'compile', 'src', '-o', 'm.json']\n"
               "from compiler.cli import main\nmain()\n")
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "CAPC_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "capc: wrote m.json"
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded == ["compiler.cli.entry", "compiler.cli.fast_compile", "compiler.cli.running",
                      "compiler.cli.writing"]
