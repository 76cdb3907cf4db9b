"""``capc record``: one real call of an api tool, written as a ToolTest case.

The call goes through the egress guard exactly as a live call does (the policy of the
compile's options, pinned addresses, redirects, the tool's retries); a recording transport
under the same client keeps each exchange. What is written never holds a resolved setting:
each is written as its ``${NAME}`` in every spelling the logs mask, credential headers
that no setting fills are written as ``<credential>``, a reply cut at the byte cap loses a
split start of a secret, and the finished text is scanned once more before any byte is
written (a hit refuses the write). The expected result is what replaying the written case
gives, so a case passes right after it was recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from compiler.diagnostics import Code, Diagnostic, Location
from compiler.errors import InputOutputError, ProblemsFound, UsageError
from compiler.runtime.context import StaticSettings
from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks
from compiler.runtime.egress.replay import RecordedExchange
from compiler.runtime.manifest.model import CapabilityEntry
from compiler.runtime.redaction import Redactor
from compiler.source.safe_read import MAX_SOURCE_BYTES
from compiler.tooltests.cases import Exchange, ToolCase, tool_test_yaml
from compiler.tooltests.wire import (
    SettingMask,
    kept_request_headers,
    written_request,
    written_response,
)

TOOLTEST_SECRET = Code("tooltest-secret", "a recording still holds a setting value")
CODES = (TOOLTEST_SECRET,)

# A case file over the source cap would not compile; a document over this is not uploaded.
MAX_DOCUMENT_BYTES = 25 * 1024 * 1024
_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_.=-]+")


@dataclass(frozen=True, slots=True)
class LiveCall:
    """A live call's exchanges (as sent and received) and the text the model read."""

    exchanges: tuple[RecordedExchange, ...]
    text: str
    failed: bool


def egress_policy(request: Any) -> EgressPolicy:
    """The address policy the compile options of ``request`` give a live call."""
    from compiler.cli.running import compile_options_for

    options = compile_options_for(request)
    return EgressPolicy(options.allow_private_networks,
                        parse_allowed_networks(options.allowed_networks))


def live_call(capability: CapabilityEntry, arguments: Mapping[str, Any],
              settings: Mapping[str, str], documents: Mapping[int, tuple[str, bytes]],
              policy: EgressPolicy) -> LiveCall:
    """Call the tool once for real through the egress guard, keeping every exchange."""
    import httpx

    from compiler.runtime.api.tool import make_blueprint
    from compiler.runtime.egress.client import KEEPALIVE_EXPIRY_SECONDS, EgressClient
    from compiler.runtime.egress.replay import RecordingTransport
    from compiler.runtime.egress.transport import PinnedNetworkBackend, PinnedTransport
    from compiler.tooltests.replaying import CaseDocuments, call_tool

    assert capability.api is not None
    limits = httpx.Limits(max_connections=10, max_keepalive_connections=2,
                          keepalive_expiry=KEEPALIVE_EXPIRY_SECONDS)
    inner = PinnedTransport(PinnedNetworkBackend(policy), limits)
    recording = RecordingTransport(inner, capability.api.max_response_bytes + 1)

    async def run() -> LiveCall:
        async with EgressClient(recording, policy) as client:
            record = await call_tool(make_blueprint(capability), arguments,
                                     StaticSettings(settings), client, CaseDocuments(documents),
                                     [])
        return LiveCall(tuple(recording.exchanges), record.text, record.failed)

    return asyncio.run(run())


def written_case(capability: CapabilityEntry, name: str, arguments: Mapping[str, Any],
                 settings: Mapping[str, str], documents: Mapping[int, tuple[str, bytes]],
                 call: LiveCall) -> ToolCase:
    """The case a live call gives, settings masked, its result still to be replayed."""
    from compiler.runtime.api.retry import RetryPolicy

    assert capability.api is not None
    retry = RetryPolicy.from_manifest(capability.api.retry)
    key_header = retry.idempotency_key if retry is not None else None
    kept = kept_request_headers(capability.api.headers, key_header)
    mask = SettingMask.of(settings)
    redactor = Redactor()
    for value in settings.values():
        redactor.add(value)
    exchanges = []
    for exchange in call.exchanges:
        reply = exchange.response
        if reply.truncated and redactor:
            # The cut may have split a secret the service echoed: drop its start.
            text = reply.body.decode("utf-8", "surrogateescape")
            text = text[: redactor.partial_tail(text)]
            reply = replace(reply, body=text.encode("utf-8", "surrogateescape"))
        exchanges.append(Exchange(written_request(exchange.request, mask, kept, key_header),
                                  written_response(reply, mask)))
    return ToolCase(code=capability.code, name=name, arguments=dict(arguments),
                    settings=tuple(sorted(settings)), documents=dict(documents),
                    exchanges=tuple(exchanges),
                    result=None if call.failed else mask.mask(call.text),
                    error=mask.mask(call.text) if call.failed else None)


def settled_result(case: ToolCase, capability: CapabilityEntry) -> tuple[ToolCase, str | None]:
    """``case`` with the result its replay gives, and how that differs from the live one."""
    from compiler.tooltests.clock import FastForwardLoop
    from compiler.tooltests.replaying import replay_outcome

    with asyncio.Runner(loop_factory=FastForwardLoop) as runner:
        text, failed = runner.run(replay_outcome(case, capability))
    live = case.error if case.error is not None else case.result
    settled = replace(case, result=None if failed else text, error=text if failed else None)
    return settled, None if text == live else text


def secret_free(text: str, settings: Mapping[str, str]) -> bool:
    """True when ``text`` holds no spelling of any setting value (the last check)."""
    redactor = Redactor()
    for value in settings.values():
        redactor.add(value)
    return not redactor or redactor.redact(text) == text


def case_name(arguments: Mapping[str, Any], taken: set[str]) -> str:
    """A readable, unused case name derived from the arguments."""
    words = [f"{key}={value}" for key, value in sorted(arguments.items())
             if isinstance(value, str | int | float | bool)]
    base = _NAME_CHARACTERS.sub("_", " ".join(words) or "call").strip("_")[:60] or "call"
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    return name


def settings_for(names: Sequence[str], from_env: bool) -> dict[str, str]:
    """The values of the settings a tool needs (from the environment, or a usage error)."""
    if not names:
        return {}
    if not from_env:
        raise UsageError(f"the tool needs the settings {', '.join(names)}: pass "
                         "--settings-from-env with each set as an environment variable")
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        raise UsageError(f"setting(s) not set in the environment: {', '.join(missing)}")
    return {name: os.environ[name] for name in names}


def documents_for(specs: Sequence[str]) -> dict[int, tuple[str, bytes]]:
    """``--document ID=PATH`` as the case's documents (each read bounded)."""
    from compiler.source.safe_read import UnsafeFile, read_regular_file

    documents = {}
    for spec in specs:
        key, _, path = spec.partition("=")
        if not key.isdigit() or not path:
            raise UsageError(f"--document {spec!r}: expected ID=PATH (ID a number)")
        try:
            content = read_regular_file(path, MAX_DOCUMENT_BYTES)
        except (UnsafeFile, OSError) as error:
            raise InputOutputError(f"--document {path}: cannot read: {error}") from None
        if len(content) > MAX_DOCUMENT_BYTES:
            raise InputOutputError(f"--document {path}: larger than {MAX_DOCUMENT_BYTES} bytes")
        documents[int(key)] = (Path(path).name, content)
    return documents


def record_case_command(request: Any, code: str, arguments_json: str, name: str | None,
                        output: str | None, settings_from_env: bool,
                        document_specs: Sequence[str], output_format: str) -> None:
    """``capc record``: compile, call once for real, write the case (exits on failure)."""
    from compiler.cli.running import failure_exit, report
    from compiler.tooltests.replaying import capabilities_of
    from compiler.tooltests.session import compile_tree

    arguments = _arguments(arguments_json)
    result = compile_tree(request, output_format)
    if result.manifest is None:
        report(result.diagnostics, output_format)
        raise SystemExit(failure_exit(result.diagnostics))
    capability = _api_capability(capabilities_of(result.manifest), code)
    from compiler.runtime.api.tool import make_blueprint

    settings = settings_for(make_blueprint(capability).settings, settings_from_env)
    documents = documents_for(document_specs)
    target = Path(output) if output else _beside(capability, request)
    taken = _names_in(target)
    chosen = name or case_name(arguments, taken)
    if chosen in taken:
        raise UsageError(f"{target} already has a case named {chosen!r}; pass another --name")
    call = live_call(capability, arguments, settings, documents, egress_policy(request))
    if not call.exchanges:
        # Nothing answered (refused, unreachable, timed out): there is no reply to replay.
        raise InputOutputError(f"{code}: no reply to record: {call.text}")
    case = written_case(capability, chosen, arguments, settings, documents, call)
    case, changed = settled_result(case, capability)
    if changed is not None:
        click.echo("capc: note: replaying the recording gives a different text than the "
                   "live call; the case expects the replayed text", err=True)
    _write_case(target, case, settings, output_format)
    statuses = ", ".join(str(item.response.status) for item in case.exchanges)
    click.echo(f"capc: recorded case {chosen!r} of {code} in {target} "
               f"({len(case.exchanges)} request(s), status {statuses})", err=True)


def _beside(capability: CapabilityEntry, request: Any) -> Path:
    """``CODE.test.yaml`` in the capability's folder (its source path is relative to the
    project root when the roots came from ``[tool.capc]``, as the compile made it)."""
    from compiler.project import read_project_settings

    folder = Path(capability.source.path).parent
    if not request.sources:
        root = read_project_settings().root
        folder = Path(os.path.relpath(root / folder, Path.cwd()))
    return folder / f"{capability.code}.test.yaml"


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise UsageError("--args must be a JSON object, e.g. '{\"city\": \"Paris\"}'") from None
    if not isinstance(value, dict):
        raise UsageError("--args must be a JSON object, e.g. '{\"city\": \"Paris\"}'")
    return value


def _api_capability(capabilities: Mapping[str, CapabilityEntry], code: str) -> CapabilityEntry:
    capability = capabilities.get(code)
    if capability is None:
        import difflib

        close = difflib.get_close_matches(code, list(capabilities), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"no capability {code!r} in the tree{hint}")
    if capability.api is None:
        raise UsageError(f"{code!r} is an {capability.type} capability; only api tools "
                         "are recorded")
    return capability


def _names_in(target: Path) -> set[str]:
    """The case names already in ``target`` (none when it does not exist yet)."""
    if not target.exists():
        return set()
    import yaml

    from compiler.source.safe_read import UnsafeFile, read_regular_file

    try:
        raw = read_regular_file(target, MAX_SOURCE_BYTES)
        documents = list(yaml.safe_load_all(raw.decode("utf-8")))
    except (UnsafeFile, OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise InputOutputError(f"{target}: cannot add a case to it: {error}") from None
    return {str(case.get("name")) for document in documents if isinstance(document, dict)
            for case in document.get("cases") or () if isinstance(case, dict)}


def _write_case(target: Path, case: ToolCase, settings: Mapping[str, str],
                output_format: str) -> None:
    """Append the case to ``target`` as a new document, atomically, after the secret scan."""
    from compiler.cli.running import report
    from compiler.manifest import write_atomically

    text = tool_test_yaml(case.code, [case])
    if not secret_free(text, settings):
        report((Diagnostic.error(Location(str(target)), TOOLTEST_SECRET,
                                 "the recording still holds a setting value; nothing was "
                                 "written"),), output_format)
        raise ProblemsFound()
    existing = target.read_bytes() if target.exists() else b""
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"
    content = existing + (b"---\n" if existing else b"") + text.encode("utf-8")
    if len(content) > MAX_SOURCE_BYTES:
        raise UsageError(f"{target} would be {len(content)} bytes, over the {MAX_SOURCE_BYTES}"
                         "-byte source cap: record a narrower call (a smaller page or a "
                         "select) or write it to another file with -o")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomically(target, content)
    except OSError as error:
        raise InputOutputError(f"{target}: cannot write: {error.strerror or error}") from None
