"""compiler.runtime's published face: ``__all__``, the lazy exports and the type checker's
imports name the same objects, and the package ships its type hints (py.typed)."""

from __future__ import annotations

import ast
import importlib
import inspect
import typing

import compiler.runtime as runtime
from compiler.runtime.errors import RuntimeLoaderError
from tests.support.paths import REPO_ROOT

INIT = REPO_ROOT / "compiler" / "runtime" / "__init__.py"


def type_checking_imports() -> dict[str, str]:
    """name -> module of every ``from M import N`` under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                for alias in statement.names:
                    found[alias.asname or alias.name] = statement.module
    return found


def test_all_the_lazy_exports_and_the_type_checking_imports_agree() -> None:
    exports = runtime._EXPORTS
    assert set(runtime.__all__) == set(exports) == set(type_checking_imports())
    assert type_checking_imports() == exports
    assert len(set(runtime.__all__)) == len(runtime.__all__)


def test_every_export_is_the_object_its_module_defines() -> None:
    for name, module in runtime._EXPORTS.items():
        value = getattr(runtime, name)
        assert value is getattr(importlib.import_module(module), name)
        assert getattr(value, "__module__", module) == module, name


def test_every_error_the_runtime_exports_shares_one_base() -> None:
    errors = [getattr(runtime, name) for name in runtime.__all__
              if inspect.isclass(getattr(runtime, name))
              and issubclass(getattr(runtime, name), Exception)]
    assert runtime.RuntimeLoaderError is RuntimeLoaderError
    assert len(errors) >= 6
    assert all(issubclass(error, RuntimeLoaderError) for error in errors)


def test_the_service_protocols_are_runtime_checkable() -> None:
    class Settings:
        async def get_user_setting_value(self, name: str, user_id: object,
                                         group_id: object) -> str | None:
            return None

    assert isinstance(Settings(), runtime.SettingsService)
    assert not isinstance(object(), runtime.DocumentService)


def test_toolset_tools_are_typed_as_langchain_tools() -> None:
    from langchain_core.tools import BaseTool

    hints = typing.get_type_hints(runtime.Toolset.tools.fget, localns={"BaseTool": BaseTool})
    assert hints["return"] == list[BaseTool]


def test_the_package_ships_py_typed() -> None:
    import tomllib

    assert (REPO_ROOT / "compiler" / "py.typed").is_file()
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["compiler"]
