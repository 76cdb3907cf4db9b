"""Replaying a case through the real tool code, offline, and what it found.

The tool is built exactly as the loader builds it (blueprint, context, ``build_api_tool``)
over an :class:`~compiler.runtime.egress.client.EgressClient` whose transport answers from
the recording (:class:`~compiler.runtime.egress.replay.ReplayTransport`): arguments are
validated, the request is built, checked, redirected, retried and its reply shaped by the
code that runs in production. Nothing connects anywhere. The run happens on a
:class:`~compiler.tooltests.clock.FastForwardLoop`, so retries and ``Retry-After`` waits
are decided as live and take no time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.context import RuntimeContext, StaticSettings
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import EgressClient
from compiler.runtime.egress.replay import ObservedRequest, ReplayTransport
from compiler.runtime.manifest.model import CapabilityEntry, parse_capability
from compiler.tooltests.cases import ToolCase
from compiler.tooltests.differences import request_differences, shown
from compiler.tooltests.wire import (
    SettingMask,
    kept_request_headers,
    replayed_reply,
    written_request,
)

if TYPE_CHECKING:
    from compiler.runtime.api.tool import ApiToolBlueprint

TOOLTEST_EXTRA_REQUEST = Code(
    "tooltest-extra-request", "the tool sent a request the recording does not hold")
TOOLTEST_IDEMPOTENCY_KEY = Code(
    "tooltest-idempotency-key", "the attempts of one call sent different idempotency keys")
TOOLTEST_OUTPUT_SCHEMA = Code(
    "tooltest-output-schema", "a recorded reply breaks the tool's output schema")
TOOLTEST_REQUEST = Code("tooltest-request", "a request differs from its recording")
TOOLTEST_RESULT = Code("tooltest-result", "the call's result differs from what the case expects")
TOOLTEST_SETUP = Code(
    "tooltest-setup", "a tool test cannot be set up (the tool cannot be built)")
TOOLTEST_UNUSED_RECORDING = Code("tooltest-unused-recording", "a recorded request was never sent")
CODES = (
    TOOLTEST_EXTRA_REQUEST, TOOLTEST_IDEMPOTENCY_KEY, TOOLTEST_OUTPUT_SCHEMA, TOOLTEST_REQUEST,
    TOOLTEST_RESULT, TOOLTEST_SETUP, TOOLTEST_UNUSED_RECORDING,
)

# The chat every case runs in: documents of the case belong to it.
CASE_CHAT = "capc-test-chat"
# Differences reported per case: the first ones say what to fix.
MAX_FINDINGS = 20


@dataclass(frozen=True, slots=True)
class CaseDocument:
    """A chat document of a case."""

    id: int
    chat_id: str
    filename: str
    content: bytes


class CaseDocuments:
    """The document service of one case: its ``documents``, all in the case's chat."""

    def __init__(self, documents: Mapping[int, tuple[str, bytes]]) -> None:
        self._documents = {key: CaseDocument(key, CASE_CHAT, filename, content)
                           for key, (filename, content) in documents.items()}

    async def get_document_by_id(self, document_id: int) -> Any:
        """The document, or None."""
        try:
            return self._documents.get(int(document_id))
        except (TypeError, ValueError):
            return None

    async def fetch_document_bytes(self, document: Any) -> tuple[str, bytes]:
        """``(filename, content)``."""
        return document.filename, document.content


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one call through a transport did: the requests it made and what the model read."""

    requests: tuple[ObservedRequest, ...]
    text: str
    failed: bool
    artifact: Any
    output_schema: Any


def capabilities_of(manifest: Mapping[str, Any]) -> dict[str, CapabilityEntry]:
    """The manifest's capabilities by code."""
    return {raw["code"]: parse_capability(raw) for raw in manifest["capabilities"]}


async def call_tool(
    blueprint: ApiToolBlueprint, arguments: Mapping[str, Any], settings: StaticSettings,
    client: EgressClient, documents: CaseDocuments, requests: list[ObservedRequest],
) -> CallRecord:
    """Build the tool of ``blueprint`` as the loader does and call it once.

    Raises the loader's errors (a setting that cannot be used, a missing service) when the
    tool cannot be built.
    """
    from compiler.runtime.api.tool import build_api_tool

    context = RuntimeContext(settings=settings, chat_id=CASE_CHAT, documents=documents)
    tool = await build_api_tool(blueprint, context, client)
    message = await tool.ainvoke({"type": "tool_call", "name": tool.name,
                                  "args": dict(arguments), "id": "capc-test"})
    content = message.content if isinstance(message.content, str) else json.dumps(
        message.content)
    return CallRecord(tuple(requests), content, getattr(message, "status", "") == "error",
                      getattr(message, "artifact", None),
                      (tool.metadata or {}).get("output_schema"))


def replay_policy() -> EgressPolicy:
    """The address policy when none is given: nothing is connected, so nothing is refused
    (a replay of ``capc test`` gets the compile options' policy instead)."""
    return EgressPolicy(allow_private_networks=True)


@dataclass(frozen=True, slots=True)
class _Replayed:
    record: CallRecord
    mask: SettingMask
    key_header: str | None


async def _replay(case: ToolCase, blueprint: ApiToolBlueprint,
                  policy: EgressPolicy | None = None) -> _Replayed:
    """Call the tool once over the case's recording; raises when it cannot be built.

    ``policy``: hosts it refuses by name or literal address are refused as live."""
    retry = blueprint.retry
    mask = SettingMask.stand_ins({*case.settings, *blueprint.settings})
    transport = ReplayTransport([replayed_reply(item.response, mask)
                                 for item in case.exchanges], policy)
    client = EgressClient(transport, policy or replay_policy())
    record = await call_tool(blueprint, case.arguments, StaticSettings(dict(mask.values)),
                             client, CaseDocuments(case.documents), transport.observed)
    return _Replayed(record, mask, retry.idempotency_key if retry is not None else None)


async def replay_outcome(case: ToolCase, capability: CapabilityEntry) -> tuple[str, bool]:
    """The text the model reads when ``case`` is replayed, and whether the call failed."""
    from compiler.runtime.api.tool import make_blueprint

    replayed = await _replay(case, make_blueprint(capability))
    return replayed.record.text, replayed.record.failed


async def replay_case(case: ToolCase, capability: CapabilityEntry,
                      blueprint: ApiToolBlueprint | None = None,
                      policy: EgressPolicy | None = None) -> list[Diagnostic]:
    """Replay ``case`` against ``capability``; a diagnostic per difference found.

    ``blueprint``: the capability's, made once for all its cases (else made here);
    ``policy``: the address policy a live call of this tree would run under.
    """
    from compiler.runtime.api.tool import make_blueprint

    try:
        replayed = await _replay(case, blueprint or make_blueprint(capability), policy)
    except Exception as error:  # the loader's own refusals: a setting, a document service
        return [Diagnostic.error(case.location(), TOOLTEST_SETUP,
                                 f"case {case.name!r}: the tool cannot be built: "
                                 f"{type(error).__name__}: {error}")]
    assert capability.api is not None
    kept = kept_request_headers(capability.api.headers, replayed.key_header)
    found = _request_findings(case, replayed.record.requests, replayed.mask, kept,
                              replayed.key_header)
    found += _result_findings(case, replayed.record)
    return found[:MAX_FINDINGS]


def _request_findings(case: ToolCase, requests: tuple[ObservedRequest, ...],
                      mask: SettingMask, kept: frozenset[str],
                      key_header: str | None) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    recorded = [exchange.request for exchange in case.exchanges]
    kept = kept | {name.lower() for request in recorded for name, _ in request.headers}
    for index, observed in enumerate(requests):
        if index >= len(recorded):
            found.append(Diagnostic.error(
                case.location("exchanges"), TOOLTEST_EXTRA_REQUEST,
                f"case {case.name!r}: the tool sent request {index + 1} "
                f"({observed.method} {shown(mask.mask(observed.url))}), and the recording "
                f"has {len(recorded)}; record the case again"))
            break
        sent = written_request(observed, mask, kept, key_header)
        for difference in request_differences(recorded[index], sent):
            found.append(Diagnostic.error(
                case.location("exchanges", index, "request", *difference.field),
                TOOLTEST_REQUEST,
                f"case {case.name!r}, request {index + 1}: {difference.message}"))
    for index in range(len(requests), len(recorded)):
        found.append(Diagnostic.error(
            case.location("exchanges", index), TOOLTEST_UNUSED_RECORDING,
            f"case {case.name!r}: recorded request {index + 1} was never sent "
            f"(the tool made {len(requests)})"))
    if key_header is not None:
        keys = {value for request in requests for name, value in request.headers
                if name.lower() == key_header.lower()}
        if len(keys) > 1:
            found.append(Diagnostic.error(
                case.location("exchanges"), TOOLTEST_IDEMPOTENCY_KEY,
                f"case {case.name!r}: the attempts of one call sent {len(keys)} different "
                f"{key_header} values; every attempt must carry the same key"))
    return found


def _result_findings(case: ToolCase, record: CallRecord) -> list[Diagnostic]:
    expected, field = (case.error, "error") if case.error is not None else (case.result, "result")
    found = []
    if record.failed != (case.error is not None):
        said = "failed" if record.failed else "succeeded"
        found.append(Diagnostic.error(
            case.location(field), TOOLTEST_RESULT,
            f"case {case.name!r}: the call {said}, and the case expects "
            f"{'an error' if case.error is not None else 'a result'}: "
            f"the tool returned {shown(record.text)}"))
    elif record.text != expected:
        found.append(Diagnostic.error(
            case.location(field), TOOLTEST_RESULT,
            f"case {case.name!r}: {field} {_text_difference(expected or '', record.text)}"))
    if record.output_schema and not record.failed:
        problem = output_schema_problem(record.output_schema, record.artifact, record.text)
        if problem is not None:
            found.append(Diagnostic.error(
                case.location("exchanges", len(case.exchanges) - 1, "response", "body"),
                TOOLTEST_OUTPUT_SCHEMA,
                f"case {case.name!r}: the reply breaks the tool's output schema: {problem}"))
    return found


def _text_difference(expected: str, got: str) -> str:
    limit = min(len(expected), len(got))
    at = next((index for index in range(limit) if expected[index] != got[index]), limit)
    line = expected.count("\n", 0, at) + 1
    return (f"differs at line {line}: expected {shown(expected[at:at + 60])}, "
            f"the tool returned {shown(got[at:at + 60])}")


def output_schema_problem(schema: Any, artifact: Any, text: str) -> str | None:
    """Why the structured value (the artifact, else the text as JSON) breaks ``schema``."""
    value = artifact
    if value is None:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return "the result is not JSON"
    import jsonschema
    import jsonschema.exceptions

    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except (jsonschema.exceptions.SchemaError, RecursionError, TypeError) as problem:
        return f"the output schema cannot be checked ({type(problem).__name__})"
    if error is None:
        return None
    where = "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                          for part in error.absolute_path)
    return f"at {where}: {shown(error.message)}"
