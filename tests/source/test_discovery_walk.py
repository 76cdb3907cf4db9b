"""Discovery's scandir walk finds what a plain os.walk finds.

The reference below is the straightforward walk, kept as the oracle: same files, same
display paths (relative to the working directory, ``../`` outside it, a symlinked file
under its own name), same disk paths, same order, on trees with symlinked files and
folders, broken links, hidden entries, and roots given relative, absolute, through a
symlink or outside the working directory.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from compiler.source.discovery import SourceFile, discover

pytestmark = pytest.mark.fastpath

SUFFIXES = (".yaml", ".yml", ".yaml.j2")


def reference_discover(roots: list[str], cwd: Path | None = None) -> list[SourceFile]:
    """The previous implementation: os.walk, and os.path.realpath for every file."""
    found: dict[str, SourceFile] = {}
    base = os.path.realpath(cwd or Path.cwd())

    def shown_for(path: Path) -> str:
        located = os.path.join(os.path.realpath(path.parent), path.name)
        return PurePosixPath(Path(os.path.relpath(located, base))).as_posix()

    for root in roots:
        root_path = Path(root)
        if root_path.is_file():
            found[shown_for(root_path)] = SourceFile(str(root_path), shown_for(root_path))
            continue
        for folder, subfolders, files in os.walk(root_path):
            subfolders[:] = [name for name in subfolders if not name.startswith(".")]
            for name in files:
                if name.endswith(SUFFIXES) and not name.startswith("."):
                    path = Path(folder) / name
                    found[shown_for(path)] = SourceFile(str(path), shown_for(path))
    return [found[key] for key in sorted(found)]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "capabilities"
    for relative in ["a.yaml", "b.yml", "c.yaml.j2", "notes.txt", ".hidden.yaml",
                     "team/x.yaml", "team/deep/y.yaml", ".git/z.yaml", "team/.cache/w.yaml"]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("code: x\n")
    outside = tmp_path / "elsewhere"
    (outside / "linked").mkdir(parents=True)
    (outside / "linked" / "l.yaml").write_text("code: l\n")
    (outside / "target.yaml").write_text("code: t\n")
    (root / "team" / "link.yaml").symlink_to(outside / "target.yaml")
    (root / "team" / "inside-link.yaml").symlink_to(root / "a.yaml")
    (root / "linked-folder").symlink_to(outside / "linked")
    (root / "broken.yaml").symlink_to(tmp_path / "missing.yaml")
    (tmp_path / "work" / "alias").symlink_to(root)
    return root


@pytest.mark.parametrize("spelling", ["relative", "absolute", "through-symlink", "dotted",
                                      "working-directory", "slashed"])
def test_the_walk_finds_what_the_old_walk_found(
    tree: Path, spelling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tree.parent
    monkeypatch.chdir(work)
    root = {"relative": "capabilities", "absolute": str(tree),
            "through-symlink": "alias", "dotted": "./capabilities/../capabilities",
            "working-directory": ".", "slashed": "capabilities//team/"}[spelling]
    found = discover([root], work)
    assert found == reference_discover([root], work)
    # The disk paths too (compare=True, but spelled as pathlib spells them: no "./").
    assert [s.disk_path for s in found] == [s.disk_path for s in reference_discover([root], work)]
    assert "capabilities/team/deep/y.yaml" in {source.display_path for source in found}


def test_roots_outside_the_working_directory_and_file_roots(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    roots = [str(tree), str(tree / "a.yaml"), str(tree.parent / "alias" / "team")]
    assert discover(roots) == reference_discover(roots)
    assert discover(roots, tree) == reference_discover(roots, tree)
    assert discover([str(tree)], Path("/")) == reference_discover([str(tree)], Path("/"))
    outside = discover([str(tree)])
    assert outside and all(not s.display_path.startswith("/") for s in outside)
    assert all(s.display_path.startswith("../work/capabilities/") for s in outside)
