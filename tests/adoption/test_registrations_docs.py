"""docs/plugins.md, "Tools the application registers itself", as an application would
copy it: its files in a project, its [tool.capc] table, then capc checks the codes."""

from __future__ import annotations

from pathlib import Path

from tests.support.capc import run_capc
from tests.support.doc_blocks import FILE_LINE, code_blocks
from tests.support.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "plugins.md"


def test_the_registrations_section_works_as_written(tmp_path: Path) -> None:
    text = PAGE.read_text()
    start = text.count("\n", 0, text.index("## 6. Tools the application registers itself"))
    blocks = [block for block in code_blocks(PAGE) if block.line > start]
    assert {block.lang for block in blocks} == {"python", "yaml", "toml"}
    for block in blocks:
        target = FILE_LINE.match(block.text)
        if target is not None:
            (tmp_path / target[1]).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / target[1]).write_text(block.text)
        else:
            assert block.lang == "toml"
            (tmp_path / "pyproject.toml").write_text(block.text)
    (tmp_path / "myapp" / "__init__.py").write_text("")
    validated = run_capc("validate", "--strict", cwd=tmp_path)
    assert validated.returncode == 0, validated.stderr
    listed = run_capc("plugins", cwd=tmp_path)
    assert "code base — Base Tools: Core agent tools" in listed.stdout
    assert "code rag" in listed.stdout and "get_document_text(document_id: integer)" \
        in listed.stdout
    (tmp_path / "capabilities" / "base.yaml").write_text(
        (tmp_path / "capabilities" / "base.yaml").read_text().replace("code: base",
                                                                      "code: bse"))
    refused = run_capc("validate", cwd=tmp_path)
    assert refused.returncode == 1 and "did you mean 'base'" in refused.stderr
