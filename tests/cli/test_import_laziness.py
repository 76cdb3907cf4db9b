"""What a compile does not need is not imported: checked in a fresh interpreter.

A no-change re-compile is mostly start-up, so the modules behind plugin discovery
(importlib.metadata, subprocess, tomllib) and behind argument models (pydantic) are
imported where they are used. These tests fail if a module-level import brings one back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import plugins
from compiler.runtime.tools import registry

pytestmark = pytest.mark.fastpath


def _imported_after(statement: str, candidates: list[str]) -> list[str]:
    program = (f"import sys\n{statement}\n"
               f"print(__import__('json').dumps([m for m in {candidates!r} if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True)
    return list(json.loads(done.stdout))


def test_the_compile_side_imports_neither_plugin_discovery_nor_pydantic() -> None:
    loaded = _imported_after(
        "import compiler.cli, compiler.plugins, compiler.overrides, compiler.build",
        ["pydantic", "importlib.metadata", "tomllib", "compiler.runtime.tools.registry"],
    )
    assert loaded == []


def test_the_argument_model_checks_work_without_pydantic_loaded() -> None:
    # A `pattern` is checked by compiling it in pydantic-core's engine, so only schemas
    # without one are checked without loading pydantic.
    loaded = _imported_after(
        "from compiler.runtime.tools.argument_models import unsupported_schema_features\n"
        "assert unsupported_schema_features({'type': 'object', 'properties': "
        "{'q': {'type': 'string', 'maxLength': 5, 'enum': ['a']}}}) == []",
        ["pydantic", "pydantic_core"],
    )
    assert loaded == []


def test_the_plugin_group_is_the_runtime_registry_group() -> None:
    assert plugins.ENTRY_POINT_GROUP == registry.ENTRY_POINT_GROUP


def test_the_compile_core_imports_jsonschema_only_when_a_check_needs_it() -> None:
    # The schema checks go through jsonschema-rs when it is installed; the pure-Python
    # jsonschema (about 80 ms) is for the errors it finds and for patched input schemas.
    loaded = _imported_after(
        "import compiler.pipeline, compiler.overrides, compiler.pins.pinned_overrides",
        ["jsonschema", "referencing"],
    )
    assert loaded == []


def test_a_cold_compile_imports_no_reader_signer_or_tempfile(tmp_path: Path) -> None:
    # A compile writes a manifest (and cache entries) but reads none back and signs nothing
    # unless a key is given; tempfile would bring shutil and the compression modules.
    from bench.corpus import write_corpus

    write_corpus(tmp_path / "capabilities", 20, seed=2)
    program = (
        "import json, sys\n"
        "from compiler.cli import cli\nfrom compiler.cli.entry import run\n"
        "code = run(cli, ['compile', 'capabilities', '-o', 'out.json'])\n"
        "print(json.dumps([code, [m for m in ['tempfile', 'shutil', 'importlib.resources', "
        "'compiler.signing', 'compiler.runtime.manifest.read'] "
        "if m in sys.modules]]))\n")
    environment = {**os.environ, "CAPC_CACHE_DIR": str(tmp_path / "cache"),
                   "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    environment.pop("CAPC_SIGNING_KEY", None)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True, cwd=tmp_path, env=environment)
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and (tmp_path / "out.json").is_file()
    assert loaded == []


def test_the_signing_variable_is_the_one_the_signer_reads() -> None:
    from compiler.cli.compiling import SIGNING_KEY_VARIABLE
    from compiler.signing import SIGNING_KEY_ENV

    assert SIGNING_KEY_VARIABLE == SIGNING_KEY_ENV
