"""Every diagnostic code capc can report has a bad case that produces it (as yamllint
proves each rule): a golden case under tests/cases/, or a command run here.

The codes are read from the registry (compiler/diagnostic_codes.py: every module's
``CODES``), so a new code without a case fails this test; so do an id declared twice, a
declared code missing from its module's ``CODES``, a declaring module missing from the
registry, and a ``Diagnostic`` call that writes its code as a literal string.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.diagnostic_codes import MODULES, DuplicateCode, declared_codes, registry
from compiler.diagnostics import Code
from tests.support.capc import run_capc
from tests.support.paths import CASES, REPO_ROOT
from tests.support.redteam import api_capability

# Codes no input can produce today, and why; the test fails when one gains a case (drop it
# from here) and when a new code is added without one.
SCHEMA_KEYWORD = "a JSON Schema keyword the published schemas use; no recorded case yet"
WITHOUT_A_CASE = {
    "invalid-pattern": "the schema check refuses an invalid regex first "
                       "(override-invalid-schema); kept as a second line",
    "openapi-not-validated": "only without openapi-spec-validator installed (capc[openapi]); "
                             "the development environment has it",
    "migrate-unsafe": "a rewrite that changes meaning is refused by construction; no input "
                      "known to reach it",
    "tooltest-idempotency-key": "the api tool sends one key per call by construction; "
                                "the replay checks that it keeps doing so",
    "openapi-ref-files": "more referenced files than the limit; no recorded case yet",
    **{f"schema-{keyword}": SCHEMA_KEYWORD for keyword in (
        "exclusiveMinimum", "maxLength", "maxProperties", "minItems", "minLength",
        "minProperties", "not", "oneOf", "uniqueItems")},
    "schema-name": "the published schemas' propertyNames fail through their pattern "
                   "(schema-pattern); kept for a propertyNames rule without one",
}


def emitted_codes() -> set[str]:
    """Every code the registry declares (the runtime reports none of its own)."""
    return set(registry())


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
    "openapi-other-document": "tests/authoring/openapi/test_openapi_reimport_guard.py",
    "openapi-security": "tests/authoring/openapi/test_openapi_rest_items.py",
    "file-name": "tests/source/test_file_names.py",
    "not-regular-file": "tests/security/test_redteam_sources.py",
    "source-link-outside": "tests/security/test_redteam_sources.py",
    "schema-maxItems": "tests/profiles/test_namespaces_manifest.py",
    "schema-required": "tests/cli/test_compile_command.py",
    "template-error": "tests/source/test_templates.py",
    "template-syntax": "tests/source/test_templates.py",
    "template-too-large": "tests/source/test_templates.py",
    "openapi-empty": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-encoding": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-syntax": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-yaml": "tests/authoring/openapi/test_openapi_reader.py",
    "openapi-ref-absolute": "tests/authoring/openapi/test_openapi_refs.py",
    "openapi-ref-file": "tests/authoring/openapi/test_openapi_bounds.py",
    "openapi-ref-loop": "tests/authoring/openapi/test_openapi_refs.py",
    "openapi-ref-missing": "tests/authoring/openapi/test_openapi_refs.py",
    "openapi-ref-outside": "tests/authoring/openapi/test_openapi_refs.py",
    "openapi-ref-remote": "tests/authoring/openapi/test_openapi_refs.py",
    "openapi-check-empty": "tests/authoring/openapi/test_openapi_corpus.py",
    "openapi-expansion": "tests/authoring/openapi/test_openapi_fan_out.py",
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
    assert len(emitted) > 150  # the registry finds the codes (a broken one finds none)
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


def _module_files() -> dict[str, Path]:
    return {".".join(path.relative_to(REPO_ROOT).with_suffix("").parts): path
            for path in (REPO_ROOT / "compiler").rglob("*.py")}


def _declared_names(tree: ast.Module) -> set[str]:
    """Names a module binds at top level to a ``Code(...)`` call."""
    return {target.id for statement in tree.body if isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "Code"
            for target in statement.targets if isinstance(target, ast.Name)}


def test_no_id_is_declared_twice() -> None:
    registry()  # raises DuplicateCode
    ids = [code.id for _, code in declared_codes()]
    assert len(ids) == len(set(ids))


def test_a_second_declaration_of_an_id_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("compiler.diagnostic_codes.MODULES", (
        "compiler.checks.names", "compiler.checks.names"))
    with pytest.raises(DuplicateCode, match="duplicate-code"):
        registry()


def test_every_declaring_module_is_registered_and_lists_its_codes() -> None:
    files = _module_files()
    declaring = {name for name, path in files.items()
                 if _declared_names(ast.parse(path.read_text(encoding="utf-8")))}
    assert declaring - {"compiler.schema.validation"}  # the reader finds declarations
    assert declaring <= set(MODULES), sorted(declaring - set(MODULES))
    for name in MODULES:
        module = __import__(name, fromlist=["CODES"])
        listed = {id(code) for code in module.CODES}
        tree = ast.parse(files[name].read_text(encoding="utf-8"))
        for constant in _declared_names(tree):
            assert id(getattr(module, constant)) in listed, f"{name}.{constant} not in CODES"


def _code_index(call: ast.Call) -> int | None:
    function = call.func
    if isinstance(function, ast.Name) and function.id == "Diagnostic":
        return 4
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) \
            and function.value.id == "Diagnostic":
        return {"error": 1, "warning": 1, "at": 2}.get(function.attr)
    return None


def literal_codes(source: str) -> list[str]:
    """The literal string codes of ``Diagnostic`` calls in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        index = _code_index(node)
        if index is None:
            continue
        argument = node.args[index] if len(node.args) > index else None
        if isinstance(argument, ast.Constant | ast.JoinedStr):
            found.append(ast.unparse(argument))
    return found


def test_the_literal_reader_sees_a_literal_code() -> None:
    assert literal_codes('Diagnostic.error(at, "x-y", "m")\n'
                         'Diagnostic.at(at, Severity.ERROR, f"x-{k}", "m")\n'
                         'Diagnostic(p, 1, 1, Severity.ERROR, "z", "m")\n'
                         'Diagnostic.error(at, X_Y, "m")\n') == ["'x-y'", "f'x-{k}'", "'z'"]


def test_no_diagnostic_call_writes_its_code_as_a_literal() -> None:
    found = {f"{path.relative_to(REPO_ROOT)}: {code}"
             for path in (REPO_ROOT / "compiler").rglob("*.py")
             for code in literal_codes(path.read_text(encoding="utf-8"))}
    assert not found, sorted(found)


def test_the_runtime_url_codes_are_declared() -> None:
    """The runtime names its URL codes as text; the compile side declares each one."""
    from compiler.checks.url_rules import RUNTIME_URL_CODES

    source = (REPO_ROOT / "compiler/runtime/egress/urls.py").read_text(encoding="utf-8")
    named = {node.args[0].value for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == "UrlProblem" and isinstance(node.args[0], ast.Constant)}
    assert named and named == set(RUNTIME_URL_CODES)
    assert all(isinstance(code, Code) for code in RUNTIME_URL_CODES.values())


def test_every_schema_keyword_code_names_a_keyword_of_the_schemas() -> None:
    from compiler.schema.validation import KEYWORD_CODES

    text = "".join(path.read_text(encoding="utf-8")
                   for path in (REPO_ROOT / "compiler/schema/json").glob("*.json"))
    unused = {keyword for keyword in KEYWORD_CODES if f'"{keyword}"' not in text}
    assert not unused, sorted(unused)
