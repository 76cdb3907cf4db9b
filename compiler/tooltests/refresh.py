"""``capc test --refresh``: call the live API again for every case and report what changed.

Each case is re-recorded exactly as ``capc record`` records (same egress guard, same
masking); the fresh recording is compared with the stored one for contract changes
(:mod:`compiler.tooltests.drift`), each reported as a ``tooltest-drift`` warning located at
the case field. Nothing is written unless ``--write`` asks: then each ToolTest file with a
changed case is rewritten with the fresh recordings (after the same secret scan).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from compiler.diagnostics import Code, Diagnostic, Location
from compiler.errors import InputOutputError, ProblemsFound
from compiler.runtime.egress.egress_errors import EgressError
from compiler.tooltests.cases import ToolCase, case_json
from compiler.tooltests.drift import case_drift

TOOLTEST_DRIFT = Code("tooltest-drift", "a live reply differs from its recording")
CODES = (TOOLTEST_DRIFT,)


def refresh_cases(cases: Sequence[ToolCase], manifest: Mapping[str, Any], request: Any,
                  settings_from_env: bool, write: bool) -> list[Diagnostic]:
    """Re-record every case live; a diagnostic per change (and per case that failed)."""
    from compiler.runtime.api.tool import make_blueprint
    from compiler.tooltests.recording import (
        egress_policy,
        live_call,
        settings_for,
        settled_result,
        written_case,
    )
    from compiler.tooltests.replaying import capabilities_of

    capabilities = capabilities_of(manifest)
    policy = egress_policy(request)
    found: list[Diagnostic] = []
    fresh_cases: dict[str, list[ToolCase]] = {}
    every_setting: dict[str, str] = {}
    for case in cases:
        capability = capabilities[case.code]
        settings = settings_for(make_blueprint(capability).settings, settings_from_env)
        every_setting.update(settings)
        try:
            call = live_call(capability, case.arguments, settings, case.documents, policy)
        except EgressError as error:
            found.append(Diagnostic.error(case.location(), TOOLTEST_DRIFT,
                                          f"case {case.name!r}: the live call failed: {error}"))
            continue
        fresh = written_case(capability, case.name, case.arguments, settings, case.documents,
                             call)
        fresh, _ = settled_result(fresh, capability)
        changes = case_drift(case, fresh)
        found += [Diagnostic.warning(case.location(*field), TOOLTEST_DRIFT,
                                     f"case {case.name!r}: {message}")
                  for field, message in changes]
        if changes and case.source is not None:
            fresh_cases.setdefault(case.source.path, []).append(fresh)
    if write:
        for path, rewritten in fresh_cases.items():
            _rewrite(Path(path), rewritten, every_setting)
            click.echo(f"capc: rewrote {len(rewritten)} case(s) in {path}", err=True)
    elif fresh_cases:
        found.append(Diagnostic.error(Location(sorted(fresh_cases)[0]), TOOLTEST_DRIFT,
                                      f"{sum(map(len, fresh_cases.values()))} case(s) no "
                                      "longer match the live API; see above, then re-record "
                                      "them with --refresh --write"))
    return found


def _rewrite(path: Path, fresh: Sequence[ToolCase], settings: Mapping[str, str]) -> None:
    """Rewrite the ToolTest documents of ``path`` with ``fresh`` cases (by code and name)."""
    import yaml

    from compiler.manifest import write_atomically
    from compiler.source.safe_read import MAX_SOURCE_BYTES, UnsafeFile, read_regular_file
    from compiler.tooltests.cases import is_tool_test_data, yaml_text
    from compiler.tooltests.recording import secret_free

    try:
        documents = list(yaml.safe_load_all(read_regular_file(path, MAX_SOURCE_BYTES)))
    except (UnsafeFile, OSError, yaml.YAMLError) as error:
        raise InputOutputError(f"{path}: cannot rewrite: {error}") from None
    if not all(is_tool_test_data(document) for document in documents if document is not None):
        raise InputOutputError(f"{path}: holds documents other than ToolTests; re-record its "
                               "cases with capc record instead")
    by_key = {(case.code, case.name): case_json(case) for case in fresh}
    for document in documents:
        if document is None:
            continue
        document["cases"] = [by_key.get((document["code"], case["name"]), case)
                             for case in document["cases"]]
    text = "---\n".join(yaml_text(document) for document in documents if document is not None)
    if not secret_free(text, settings):
        raise ProblemsFound(f"{path}: the new recording still holds a setting value; "
                            "nothing was written")
    write_atomically(path, text.encode("utf-8"))
