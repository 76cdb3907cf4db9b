"""The package's import graph, read from source: no circles, and the compile side uses only
the runtime modules docs/architecture.md names (so the runtime's face stays deliberate)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.imports import circles, import_graph
from tests.support.paths import REPO_ROOT

ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"


def test_no_module_of_compiler_imports_itself_through_others() -> None:
    # Lazy imports count: a circle hidden inside a function is still a circle.
    assert circles(import_graph(REPO_ROOT, "compiler")) == []


def test_the_circle_finder_finds_a_circle_through_a_lazy_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def f():\n    from pkg import c\n")
    (package / "c.py").write_text("from . import a\nfrom typing import TYPE_CHECKING\n")
    (package / "d.py").write_text("from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from pkg import e\n")
    (package / "e.py").write_text("import pkg.d\n")
    assert circles(import_graph(tmp_path, "pkg")) == [["pkg.a", "pkg.b", "pkg.c"]]


def allowed_runtime_modules() -> set[str]:
    """The runtime modules docs/architecture.md lets the compile side import."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split(
        "## What the compile side imports from the runtime", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(compiler\.runtime[\w.]*)`", section))


def test_the_compile_side_imports_only_the_listed_runtime_modules() -> None:
    graph = import_graph(REPO_ROOT, "compiler")
    used = {target for module, targets in graph.items()
            if not module.startswith("compiler.runtime") for target in targets
            if target.startswith("compiler.runtime")}
    allowed = allowed_runtime_modules()
    assert used <= allowed, f"not in docs/architecture.md: {sorted(used - allowed)}"
    assert allowed <= set(graph), f"no such module: {sorted(allowed - set(graph))}"


# The layers a compile runs before and beside the checks: nothing here imports checks/
# (the checks import them). normalize.py borrowed the tool naming rule from checks/api.py
# and output shaping from checks/output_schema.py; it now reads the first, as the checks do,
# from the manifest model (runtime/manifest/api_entries) and the second from
# output_shaping.py (with output_projection.py), below both. No exception is left.
BELOW_THE_CHECKS = ("compiler.source", "compiler.schema", "compiler.diagnostics",
                    "compiler.normalize", "compiler.output_shaping",
                    "compiler.output_projection", "compiler.runtime")


def test_the_layers_below_the_checks_import_nothing_from_them() -> None:
    graph = import_graph(REPO_ROOT, "compiler")
    upward = {(module, target) for module, targets in graph.items()
              if module.startswith(BELOW_THE_CHECKS) for target in targets
              if target.startswith("compiler.checks")}
    assert upward == set(), sorted(upward)
