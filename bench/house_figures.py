"""The house's figures (issue 31): what STYLE's size rules and naming rules count.

    python -m bench.house_figures [CHECKOUT]

Prints, for ``CHECKOUT`` (default: this one): the modules of ``compiler/`` over 400 lines,
the functions over 80 lines (``def`` to the last line of its body), the file names two
modules of ``compiler/`` share (``__init__.py`` aside) and the test folders (the folders
directly under ``tests/``). Duplicate code is counted by the ``duplicates`` tool
(``duplicates --repo compiler``), not here. Not a timing: counts of the tree as it is.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.timing import REPOSITORY

MODULE_LINES = 400
FUNCTION_LINES = 80


@dataclass(frozen=True, slots=True)
class HouseFigures:
    """What the house rules count in one checkout."""

    long_modules: tuple[tuple[str, int], ...]
    long_functions: tuple[tuple[str, str, int], ...]
    shared_names: tuple[str, ...]
    test_folders: tuple[str, ...]


def house_figures(checkout: Path) -> HouseFigures:
    """The figures of ``checkout`` (a capc repository root)."""
    long_modules: list[tuple[str, int]] = []
    long_functions: list[tuple[str, str, int]] = []
    names: Counter[str] = Counter()
    for module in sorted((checkout / "compiler").rglob("*.py")):
        if "__pycache__" in module.parts:
            continue
        shown = str(module.relative_to(checkout))
        text = module.read_text(encoding="utf-8")
        if module.name != "__init__.py":
            names[module.name] += 1
        if text.count("\n") > MODULE_LINES:
            long_modules.append((shown, text.count("\n")))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    long_functions.append((shown, node.name, length))
    folders = sorted(path.name for path in (checkout / "tests").iterdir()
                     if path.is_dir() and path.name != "__pycache__")
    return HouseFigures(tuple(long_modules), tuple(long_functions),
                        tuple(sorted(name for name, count in names.items() if count > 1)),
                        tuple(folders))


def main(arguments: list[str] | None = None) -> int:
    """Print the figures of the checkout named (default: this one)."""
    given = sys.argv[1:] if arguments is None else arguments
    checkout = Path(given[0]) if given else REPOSITORY
    figures = house_figures(checkout)
    print(f"modules over {MODULE_LINES} lines: {len(figures.long_modules)} "
          f"{list(figures.long_modules)}")
    print(f"functions over {FUNCTION_LINES} lines: {len(figures.long_functions)} "
          f"{list(figures.long_functions)}")
    print(f"shared file names: {len(figures.shared_names)} {list(figures.shared_names)}")
    print(f"test folders: {len(figures.test_folders)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
