"""Shared helpers of the red-team corpus: run the real ``capc`` entry point in a folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.capc import run_capc

API = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
type: api
options:
  name: {name}
  description: d
  url: "{url}"
{extra}"""


def api_capability(code: str = "tool_a", url: str = "https://api.example.com/v1",
                   extra: str = "", name: str | None = None) -> str:
    """The YAML of one api capability; ``extra`` is more ``options`` lines (indented 2)."""
    return API.format(code=code, name=name or code, url=url, extra=extra)


@dataclass(frozen=True)
class Run:
    """What one ``capc`` invocation printed and returned."""

    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr

    def assert_clean(self) -> None:
        """No traceback, no internal error: a clean exit whatever the input."""
        assert "Traceback" not in self.output, self.output
        assert "internal error" not in self.output, self.output


def capc(cwd: Path, *arguments: str) -> Run:
    """Run ``capc ARGUMENTS`` in ``cwd`` in-process (tests/support/capc.py), and check that
    it exited cleanly whatever the input."""
    done = run_capc(*arguments, cwd=cwd)
    run = Run(done.returncode, done.stdout, done.stderr)
    run.assert_clean()
    return run


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` (relative path → text or bytes) under ``root``; return ``root``."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root
