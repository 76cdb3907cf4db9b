"""bench/house_figures.py counts what the house rules count (issue 31's figures)."""

from __future__ import annotations

from pathlib import Path

from bench.house_figures import house_figures, main


def _module(lines: int, function_lines: int = 0) -> str:
    text = ""
    if function_lines:
        text = "def long():\n" + "".join(f"    x{n} = {n}\n" for n in range(function_lines - 1))
    return text + "".join(f"y{n} = {n}\n" for n in range(lines - text.count("\n")))


def test_each_figure_counts_what_its_rule_names(tmp_path: Path) -> None:
    (tmp_path / "compiler" / "cache").mkdir(parents=True)
    (tmp_path / "compiler" / "big.py").write_text(_module(401))
    (tmp_path / "compiler" / "fits.py").write_text(_module(400, function_lines=80))
    (tmp_path / "compiler" / "cache" / "fits.py").write_text(_module(120, function_lines=81))
    (tmp_path / "compiler" / "__init__.py").write_text("")
    (tmp_path / "compiler" / "cache" / "__init__.py").write_text("")
    for folder in ("unit", "cache", "cases"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
    figures = house_figures(tmp_path)
    assert figures.long_modules == (("compiler/big.py", 401),)
    assert figures.long_functions == (("compiler/cache/fits.py", "long", 81),)
    assert figures.shared_names == ("fits.py",)
    assert figures.test_folders == ("cache", "cases", "unit")
    assert main([str(tmp_path)]) == 0
