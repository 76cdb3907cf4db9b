"""Fast paths under one rule: no module-level memo in compiler/, and every shortcut names
the test that proves it equal to its general path.

A memo is state a module keeps between calls: a module-level dict, list or set that a
function mutates, a ``global`` rebinding, or ``functools.cache``/``lru_cache`` on a
function or method. A compile's memo hangs off an object made for that compile; what
stays below is listed with its reason: tables
built once from the package's own files or lazy imports (the same value for every call),
and the runtime's per-process answers, each bounded.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

COMPILER = REPO_ROOT / "compiler"

# "module:name" -> why it may keep state between calls.
ALLOWED = {
    # Immutable tables built once, from the package's own files or a lazy import.
    "compiler.schema.validation:validator_for": "one validator per shipped kind's schema",
    "compiler.schema.validation:fast_check_for": "one compiled check per shipped kind",
    "compiler.schema.validation:_ecma_anchored": "the shipped schemas' own patterns",
    "compiler.report.escape:_unsafe": "two patterns (keep_newlines or not), built on need",
    "compiler.profiles.tokens:o200k": "the tokenizer's table, loaded on first use",
    "compiler.cache.fingerprint:compiler_fingerprint": "a hash of the installed package's files",
    "compiler.runtime.telemetry:otel_installed": "whether a package is installed",
    "compiler.runtime.telemetry:_trace_api": "a lazy import",
    "compiler.runtime.tools.argument_models:_pydantic": "a lazy import",
    "compiler.runtime.api.selection:_budgeted_interpreter": "a class made on first use",
    "compiler.runtime.redaction:_named_entities": "the HTML5 entity table, on first use",
    # Process state by design, not a memo of a computation.
    "compiler.cache.cache_keys:_EPHEMERAL_KEY": "a per-process key when the key file "
    "would sit in the working tree (the cache then lives only as long as the process)",
    # The runtime's answers per process (an agent server's calls, not a compile), bounded.
    "compiler.runtime.redaction:_spelled": "a secret's spellings, 256 secrets at most",
    "compiler.runtime.redaction:_secret_pattern": "a secret's pattern, 256 at most",
    "compiler.runtime.api.output_validation:pattern_cost": "per reply string checked, "
    "512 patterns at most",
    "compiler.runtime.serve.catalog:_API_NAMES": "weakly keyed by the Manifest: per "
    "loaded manifest, gone with it",
}

_MUTATORS = frozenset({"append", "add", "update", "setdefault", "pop", "clear", "extend",
                       "insert", "remove", "discard", "popitem", "move_to_end",
                       "appendleft", "__setitem__"})
_CONTAINERS = frozenset({"dict", "list", "set", "OrderedDict", "defaultdict", "deque",
                         "Counter", "WeakKeyDictionary", "WeakValueDictionary", "WeakSet"})
_CACHES = re.compile(r"(^|\.)(cache|lru_cache)\b")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp
                  | ast.SetComp):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in _CONTAINERS
    return False


def _mutated_name(node: ast.AST) -> str | None:
    """The plain name a statement or call mutates in place, if any."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) and node.func.attr in _MUTATORS:
        return node.func.value.id
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign | ast.Delete):
        targets = list(node.targets)
    elif isinstance(node, ast.AugAssign):
        targets = [node.target]
    for target in targets:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return target.value.id
    return None


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {argument.arg for argument in ast.walk(function.args)
             if isinstance(argument, ast.arg)}
    names |= {node.id for node in ast.walk(function)
              if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    return names


def memos(source: str, module: str) -> Iterator[str]:
    """``module:name`` of every piece of state a module keeps between calls."""
    tree = ast.parse(source)
    containers: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and _is_container(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            containers |= {target.id for target in targets if isinstance(target, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(_CACHES.search(ast.unparse(decorator)) for decorator in
                   node.decorator_list):
                yield f"{module}:{node.name}"
            own = _locals(node)
            for inner in ast.walk(node):
                if isinstance(inner, ast.Global):
                    yield from (f"{module}:{name}" for name in inner.names)
                name = _mutated_name(inner)
                if name in containers and name not in own:
                    yield f"{module}:{name}"


def test_the_reader_finds_each_kind_of_memo() -> None:
    source = (
        "import functools\nfrom functools import lru_cache\n"
        "_SEEN = {}\n_ORDER: list[int] = []\n_TABLE = {'a': 1}\n_COUNT = 0\n"
        "def remember(key, value):\n    _SEEN[key] = value\n"
        "def note(value):\n    _ORDER.append(value)\n"
        "def read(key):\n    return _TABLE[key]\n"
        "def shadowed():\n    _TABLE = {}\n    _TABLE['b'] = 2\n"
        "def count():\n    global _COUNT\n    _COUNT += 1\n"
        "@functools.cache\ndef cached(x):\n    return x\n"
        "@lru_cache(maxsize=8)\ndef bounded(x):\n    return x\n"
        "class Holder:\n    @functools.lru_cache\n    def method(self):\n        return 1\n")
    assert sorted(set(memos(source, "m"))) == [
        "m:_COUNT", "m:_ORDER", "m:_SEEN", "m:bounded", "m:cached", "m:method"]


def test_no_module_of_compiler_keeps_a_memo_outside_the_list() -> None:
    found: set[str] = set()
    for path in sorted(COMPILER.rglob("*.py")):
        found |= set(memos(path.read_text(encoding="utf-8"), _module_name(path)))
    unlisted = sorted(found - set(ALLOWED))
    assert not unlisted, f"module-level memos (hang them off a per-compile object): {unlisted}"
    assert not set(ALLOWED) - found, f"listed but gone: {sorted(set(ALLOWED) - found)}"


_PROOF = re.compile(r"Proven equal by\s+(tests/[\w/]+\.py)::(\w+)")


def test_every_named_proof_is_a_test_that_exists() -> None:
    proofs: list[tuple[str, str, str]] = []
    for path in sorted(COMPILER.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        proofs += [(str(path.relative_to(REPO_ROOT)), file, name)
                   for file, name in _PROOF.findall(text)]
    assert len(proofs) >= 10, proofs
    missing = []
    for where, file, name in proofs:
        test_file = REPO_ROOT / file
        defined = test_file.is_file() and any(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
            for node in ast.walk(ast.parse(test_file.read_text(encoding="utf-8"))))
        if not defined:
            missing.append(f"{where}: {file}::{name}")
    assert not missing, missing


def test_the_measurement_in_the_docs_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/performance.md's command for the fast-path figures, on a small corpus."""
    from bench import fast_paths

    section = (REPO_ROOT / "docs" / "performance.md").read_text(encoding="utf-8").split(
        "## Fast paths: the rule, and what each buys", 1)[1].split("\n## ", 1)[0]
    command = next(line.strip() for line in section.splitlines()
                   if line.startswith("    .venv/bin/python -m bench.fast_paths"))
    arguments = command.split()[3:]
    assert arguments[:2] == ["--files", "2000"]
    assert fast_paths.main(["--files", "30", "--runs", "1", *arguments[4:]]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(fast_paths.shortcuts())
    for shortcut in fast_paths.shortcuts():
        assert (REPO_ROOT / shortcut.proven_by).is_file(), shortcut
