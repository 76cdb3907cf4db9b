"""docs/architecture.md's module tables and README's layout block name files that exist."""

from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
_ROW = re.compile(r"^\| (`compiler/[^|]*)\|", re.MULTILINE)
_NAME = re.compile(r"`([A-Za-z0-9_./]+)`")


def _row_paths(first_cell: str) -> list[str]:
    """The paths a table row's first cell names; relative names (``errors.py``, ``api/``,
    a bare module ``watch_source``) are read beside the row's first path."""
    names = _NAME.findall(first_cell)
    base = names[0].rstrip("/").rsplit("/", 1)[0]
    paths = [names[0]]
    for name in names[1:]:
        relative = name if name.endswith(("/", ".py")) else f"{name}.py"
        paths.append(relative if name.startswith("compiler/") else f"{base}/{relative}")
    return paths


def architecture_paths(text: str) -> list[str]:
    """Every path named in the first column of architecture.md's module tables."""
    return [path for cell in _ROW.findall(text) for path in _row_paths(cell)]


def readme_layout_paths(text: str) -> list[str]:
    """The names README's layout block lists: top-level folders and compiler/'s entries."""
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    paths: list[str] = []
    for line in block.splitlines():
        if re.match(r"^\S", line):
            paths.append(line.split()[0])
        elif (entry := re.match(r"^  (\S+)", line)) is not None:
            paths.append(f"compiler/{entry.group(1)}")
            paths += [f"compiler/{name}" for name in re.findall(r"\s{2,}(\w+\.py)\s", line)]
    return paths


def test_architecture_tables_name_existing_files() -> None:
    paths = architecture_paths((REPOSITORY / "docs" / "architecture.md").read_text())
    assert len(paths) > 30
    assert [path for path in paths if not (REPOSITORY / path).exists()] == []


def test_readme_layout_names_existing_files() -> None:
    paths = readme_layout_paths((REPOSITORY / "README.md").read_text())
    assert "compiler/pipeline.py" in paths and "compiler/plugins.py" in paths
    assert [path for path in paths if not (REPOSITORY / path).exists()] == []


def test_a_missing_file_is_noticed() -> None:
    text = "| `compiler/runtime/fleet/watch.py` (+ `watch_gone`), `usage.py` | x |\n"
    assert architecture_paths(text) == ["compiler/runtime/fleet/watch.py",
                                        "compiler/runtime/fleet/watch_gone.py",
                                        "compiler/runtime/fleet/usage.py"]
    assert not (REPOSITORY / "compiler/runtime/fleet/watch_gone.py").exists()


def test_every_package_of_compiler_appears_in_architecture() -> None:
    text = (REPOSITORY / "docs" / "architecture.md").read_text()
    named = set(architecture_paths(text))
    packages = sorted(str(init.parent.relative_to(REPOSITORY)) + "/"
                      for init in (REPOSITORY / "compiler").rglob("__init__.py")
                      if "__pycache__" not in init.parts)
    missing = [package for package in packages if package != "compiler/"
               and package not in named and package not in text
               and not any(path.startswith(package) for path in named)]
    assert missing == []
