"""Every diagnostic code the compile side can emit has a bad case that produces it (as
yamllint proves each rule): a golden case under tests/cases/, or a command run here.

The codes are read from the source (every ``Diagnostic.error``/``warning``/``at`` call
with a literal code), so a new code without a case fails this test.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.paths import CASES, REPO_ROOT
from tests.support.redteam import api_capability

SEVERITY_ARGUMENT = {"error": 1, "warning": 1, "at": 2}
# Codes no input can produce today, and why; the test fails when one gains a case (drop it
# from here) and when a new code is added without one.
WITHOUT_A_CASE = {
    "invalid-pattern": "the schema check refuses an invalid regex first "
                       "(override-invalid-schema); kept as a second line",
    "openapi-not-validated": "only without openapi-spec-validator installed (capc[openapi]); "
                             "the development environment has it",
    "migrate-unsafe": "a rewrite that changes meaning is refused by construction; no input "
                      "known to reach it",
    "tooltest-idempotency-key": "the api tool sends one key per call by construction; "
                                "the replay checks that it keeps doing so",
}


def emitted_codes() -> set[str]:
    """Every literal diagnostic code under compiler/ (the runtime has no diagnostics)."""
    codes: set[str] = set()
    for path in (REPO_ROOT / "compiler").rglob("*.py"):
        if "runtime" in path.relative_to(REPO_ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            index = SEVERITY_ARGUMENT.get(node.func.attr)
            if index is None or len(node.args) <= index:
                continue
            argument = node.args[index]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                codes.add(argument.value)
    return codes


def golden_codes() -> set[str]:
    """The codes the recorded bad (and hostile) cases produce."""
    found: set[str] = set()
    for expected in CASES.rglob("expected.txt"):
        found |= set(re.findall(r"(?:error|warning)\[([a-z0-9-]+)\]",
                                expected.read_text(encoding="utf-8")))
    return found


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


TEMPLATE = "apiVersion: capc/v1\nkind: Capability\ncode: t\nname: {{ title }}\ntype: internal\n"


def _stale(root: Path) -> list[str]:
    _write(root, {"capabilities/a.yaml": api_capability()})
    return ["compile", "--check"]


def _vars(content: str | None) -> Callable[[Path], list[str]]:
    def setup(root: Path) -> list[str]:
        _write(root, {"capabilities/t.yaml.j2": TEMPLATE})
        if content is not None:
            _write(root, {"vars.yaml": content})
        return ["validate", "--vars", "vars.yaml"]
    return setup


def _settings(content: str | None) -> Callable[[Path], list[str]]:
    def setup(root: Path) -> list[str]:
        _write(root, {"capabilities/a.yaml": api_capability()})
        if content is not None:
            _write(root, {"settings.yaml": content})
        return ["lock", "--settings", "settings.yaml"]
    return setup


def _migrate_yaml(root: Path) -> list[str]:
    _write(root, {"capabilities/a.yaml": "name: [unclosed\n"})
    return ["migrate", "capabilities"]


def _import_unknown_group(root: Path) -> list[str]:
    rows = ('[{"id": 1, "group_id": 7, "name": "Wiki", "code": "wiki", "type": "internal",'
            ' "options": {}}]')
    _write(root, {"rows.json": rows})
    return ["import", "rows.json", "--group", "8", "-o", "capabilities"]


COMMAND_CASES: dict[str, Callable[[Path], list[str]]] = {
    "import-groups": _import_unknown_group,
    "stale-manifest": _stale,
    "vars-unreadable": _vars(None),
    "vars-not-mapping": _vars("- a list\n"),
    "settings-unreadable": _settings(None),
    "settings-not-mapping": _settings("- a list\n"),
    "yaml": _migrate_yaml,
}


# Codes whose bad case is a test of their own module (a command run with a real input),
# named here so the link is checked: that module asserts the code.
PROVEN_IN = {
    "openapi-check-empty": "tests/authoring/openapi/test_openapi_corpus.py",
    "openapi-expansion": "tests/authoring/openapi/test_openapi_refs.py",
    "openapi-invalid": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-no-server": "tests/authoring/openapi/test_openapi_codes.py",
    "openapi-read": "tests/authoring/openapi/test_openapi_codes.py",
    "openapi-selector": "tests/authoring/openapi/test_openapi_codes.py",
    "openapi-server": "tests/authoring/openapi/test_openapi_codes.py",
    "openapi-skipped": "tests/authoring/openapi/test_openapi_hostile.py",
    "openapi-structure": "tests/authoring/openapi/test_openapi_codes.py",
    "openapi-swagger2": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-too-deep": "tests/authoring/openapi/test_openapi_codes.py",
    "openapi-too-large": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-unsafe-name": "tests/authoring/openapi/test_openapi_naming.py",
    "openapi-version": "tests/authoring/openapi/test_openapi_reader.py",
    "profile-no-tokenizer": "tests/profiles/test_budget_rules.py",
    "profile-provider-limit": "tests/profiles/test_budget_and_diff.py",
    "profile-uncountable-tool": "tests/profiles/test_hostile_profiles.py",
    "api-required-default": "tests/adoption/test_newcomer_messages.py",
    "mcp-unknown-option": "tests/adoption/test_lock_servers.py",
    "override-consumer-only-bound": "tests/review/test_consumer_only.py",
    "override-consumer-only-unknown": "tests/review/test_consumer_only.py",
    "api-template-media-type": "tests/security/test_redteam_runtime.py",
    "api-output-schema-size": "tests/cli/test_output_schema_compile.py",
    "import": "tests/authoring/test_import_rows.py",
    "import-code-exists": "tests/authoring/test_adoption_keeps_tree_valid.py",
    "import-duplicate-code": "tests/authoring/test_import_rows.py",
    "import-exists": "tests/authoring/test_import_rows.py",
    "import-invalid-code": "tests/authoring/test_import_rows.py",
    "import-path": "tests/authoring/test_import_rows.py",
    "import-unknown-column": "tests/authoring/test_import_rows.py",
    "io": "tests/authoring/test_migrate_files.py",
    "legacy-row": "tests/authoring/test_import_rows.py",
    "lock-invalid": "tests/cli/test_lock_command.py",
    "migrate-layout": "tests/authoring/test_migrate_files.py",
    "migrate-template": "tests/authoring/test_migrate_files.py",
    "plugin-load-failed": "tests/catalogue/test_compile_with_plugins.py",
    "stale-signature": "tests/cli/test_signing_commands.py",
    "unknown-internal-code": "tests/catalogue/test_compile_with_plugins.py",
    "tooltest-request": "tests/tooltests/test_pull_requests.py",
    "tooltest-result": "tests/tooltests/test_bad_recordings.py",
    "tooltest-extra-request": "tests/tooltests/test_bad_recordings.py",
    "tooltest-unused-recording": "tests/tooltests/test_bad_recordings.py",
    "tooltest-invalid": "tests/tooltests/test_bad_recordings.py",
    "tooltest-setup": "tests/tooltests/test_bad_recordings.py",
    "tooltest-output-schema": "tests/tooltests/test_bad_recordings.py",
    "tooltest-secret": "tests/tooltests/test_secrets.py",
    "tooltest-missing": "tests/tooltests/test_coverage.py",
    "tooltest-drift": "tests/tooltests/test_refresh.py",
}


def test_every_emitted_code_has_a_case() -> None:
    emitted = emitted_codes()
    assert len(emitted) > 50  # the reader finds the codes (a broken reader finds none)
    covered = golden_codes() | set(COMMAND_CASES) | set(PROVEN_IN)
    assert emitted - covered == set(WITHOUT_A_CASE), sorted(emitted - covered)
    assert set(PROVEN_IN) <= emitted and set(COMMAND_CASES) <= emitted


@pytest.mark.parametrize("code", sorted(PROVEN_IN))
def test_the_named_module_asserts_the_code(code: str) -> None:
    text = (REPO_ROOT / PROVEN_IN[code]).read_text(encoding="utf-8")
    assert f"[{code}]" in text or f'"{code}"' in text


@pytest.mark.parametrize("code", sorted(COMMAND_CASES))
def test_the_command_case_produces_its_code(tmp_path: Path, code: str) -> None:
    arguments = COMMAND_CASES[code](tmp_path)
    done = run_capc(*arguments, cwd=tmp_path, extra_env={"CAPC_NO_CACHE": "1"})
    assert f"[{code}]" in done.stderr, done.stderr
    assert done.returncode in (1, 2)
