"""Semantic checks of ``type: api`` capabilities (SPEC §2.1), every problem in one pass."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from compiler.checks.output_schema import check_output_schema
from compiler.checks.parameter_rules import WalkedParameter, check_parameters, walked_parameters
from compiler.checks.url_rules import (
    RepeatedAnswers,
    check_body_template_secrets,
    check_headers,
    check_plain_http_secrets,
    check_url,
)
from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.manifest.model import (
    DEFAULT_METHOD,
    IDEMPOTENT_METHODS,
    tool_name,
    tool_name_path,
)
from compiler.runtime.manifest.parameters import BODY, FILES, PATH, QUERY, TEMPLATE
from compiler.runtime.placeholders import template_slots, url_slots
from compiler.source.documents import SourceDocument

API_BODY_CONFLICT = Code("api-body-conflict", "body and body_template are both set")
API_BODY_ON_GET = Code("api-body-on-get", "a GET or DELETE request is given a body")
API_BODY_PARAM_UNUSED = Code(
    "api-body-param-unused", "a body parameter is not used by body_template")
API_FILES_CONFLICT = Code("api-files-conflict", "files are combined with body_template")
API_FILES_CONTENT_TYPE = Code(
    "api-files-content-type", "Content-Type is set by hand on a files upload")
API_PARAMETER_CONFLICT = Code(
    "api-parameter-conflict", "two parameters claim the same argument name")
API_PATH_PARAM_UNUSED = Code("api-path-param-unused", "a path parameter has no slot in the URL")
API_RESPONSE_SELECT = Code(
    "api-response-select", "response.select is not a valid JMESPath expression")
API_RESPONSE_SELECT_GROWTH = Code(
    "api-response-select-growth", "response.select can multiply the size of the response")
API_RETRY_BACKOFF = Code("api-retry-backoff", "the retry backoff is not shorter than the timeout")
API_RETRY_KEY_HEADER = Code(
    "api-retry-key-header", "the idempotency key header is also set in headers")
API_RETRY_NOT_IDEMPOTENT = Code(
    "api-retry-not-idempotent", "retries are set on a method that is not idempotent")
API_SLOT_IN_ORIGIN = Code("api-slot-in-origin", "a slot sits in the URL's scheme, host or port")
API_TEMPLATE_CONTENT_TYPE = Code(
    "api-template-content-type", "a string body_template is sent without a Content-Type",
    Severity.WARNING)
API_TEMPLATE_MEDIA_TYPE = Code(
    "api-template-media-type", "a body_template's media type is not one capc can render")
API_TOOL_NAME = Code("api-tool-name", "a tool name is not 1-64 letters, digits, _ or -")
CODES = (
    API_BODY_CONFLICT, API_BODY_ON_GET, API_BODY_PARAM_UNUSED, API_FILES_CONFLICT,
    API_FILES_CONTENT_TYPE, API_PARAMETER_CONFLICT, API_PATH_PARAM_UNUSED, API_RESPONSE_SELECT,
    API_RESPONSE_SELECT_GROWTH, API_RETRY_BACKOFF, API_RETRY_KEY_HEADER,
    API_RETRY_NOT_IDEMPOTENT, API_SLOT_IN_ORIGIN, API_TEMPLATE_CONTENT_TYPE,
    API_TEMPLATE_MEDIA_TYPE, API_TOOL_NAME,
)

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
METHODS_WITHOUT_BODY = frozenset({"GET"})


def check_api(document: SourceDocument, allow_private_networks: bool,
              policy: EgressPolicy | None = None) -> list[Diagnostic]:
    """Every api-specific problem of one (schema-valid) capability document (``policy``:
    the allowed networks a literal host may be in)."""
    return check_api_documents([document], allow_private_networks, policy)


# One api check: (document, its options, its walked parameters) -> what it finds.
_ApiCheck = Callable[[SourceDocument, dict[str, Any], tuple[WalkedParameter, ...]],
                     list[Diagnostic]]


def check_api_documents(documents: Sequence[SourceDocument], allow_private_networks: bool,
                        policy: EgressPolicy | None = None) -> list[Diagnostic]:
    """:func:`check_api` of every document (the run remembers the answers about hosts and
    headers its files repeat: url_rules.RepeatedAnswers), one check at a time over all of
    them: each call site then calls one function 1,000s of times in a row, which Python
    runs faster than eleven in turn (the bench corpus's 1,209 api documents: 34 -> 24 ms).
    The same diagnostics: one document's in the same order, a run's are settled (sorted).
    Proven equal by
    tests/checks/test_check_fast_paths.py::test_api_checks_over_many_documents_find_what_each_document_finds."""
    answers = RepeatedAnswers(policy.allowed_networks if policy else ())
    checks: list[_ApiCheck] = [
        lambda document, options, _: _check_tool_name(document, options),
        lambda document, options, _: check_url(
            document, ("options", "url"), options["url"], allow_private_networks, policy,
            answers),
        lambda document, options, _: check_headers(
            document, ("options", "headers"), options.get("headers") or {}, answers),
        lambda document, options, _: check_plain_http_secrets(
            document, ("options", "url"), options["url"], options.get("headers") or {}),
        check_body_template_secrets,
        lambda document, options, _: _check_slots_and_sections(
            document, options, options["url"]),
        lambda document, options, _: _check_body(document, options),
        check_parameters,
        lambda document, options, _: _check_response(document, options),
        lambda document, options, _: _check_retry(document, options),
        lambda document, options, _: check_output_schema(document, options),
    ]
    # One walk of each parameter tree, for the two checks that read the entries.
    walked = [(document, options, walked_parameters(options))
              for document in documents for options in (document.data["options"],)]
    found: list[Diagnostic] = []
    for check in checks:
        for document, options, parameters in walked:
            found += check(document, options, parameters)
    return found


def _check_tool_name(document: SourceDocument, options: dict[str, Any]) -> list[Diagnostic]:
    name = tool_name(document.data)
    if TOOL_NAME_PATTERN.fullmatch(name):
        return []
    return [Diagnostic.error(document.location(tool_name_path(options)), API_TOOL_NAME,
                             f"tool name {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")]


def _check_response(document: SourceDocument, options: dict[str, Any]) -> list[Diagnostic]:
    """``options.response.select`` must be a JMESPath expression the runtime can run, and
    one that cannot multiply a reply beyond the runtime's bound."""
    select = (options.get("response") or {}).get("select")
    if select is None:
        return []
    import jmespath
    from jmespath.exceptions import JMESPathError

    from compiler.runtime.api.selection import MAX_GROWTH, growth_factor

    try:
        jmespath.compile(select)
    except JMESPathError as error:
        first_line = str(error).splitlines()[0]
        problem = re.sub(r"^(Invalid|Bad) jmespath expression: ", "", first_line).rstrip(":")
        problem = problem.split(": Parse error at column", 1)[0]
        position = getattr(error, "lex_position", None)
        where = f" (at character {position + 1})" if isinstance(position, int) else ""
        return [Diagnostic.error(document.location(("options", "response", "select")),
                                 API_RESPONSE_SELECT,
                                 f"select is not a valid JMESPath expression{where}: {problem}")]
    growth = growth_factor(select)
    if growth > MAX_GROWTH:
        # The runtime would stop it on every reply; refusing it here says why, once.
        return [Diagnostic.error(
            document.location(("options", "response", "select")), API_RESPONSE_SELECT_GROWTH,
            f"select can make up to {growth:g} times the size of the response (multi-selects "
            f"of the same value, piped or projected, multiply); at most {MAX_GROWTH} is allowed")]
    return []


def _check_retry(document: SourceDocument, options: dict[str, Any]) -> list[Diagnostic]:
    """Retries that could repeat a side effect, or a key header that clashes, are refused."""
    retry = options.get("retry")
    if retry is None:
        return []
    at = document.location
    found: list[Diagnostic] = []
    method = options.get("method", "GET")
    key = retry.get("idempotency_key")
    if retry["attempts"] > 1 and method not in IDEMPOTENT_METHODS and key is None:
        found.append(Diagnostic.error(
            at(("options", "retry")), API_RETRY_NOT_IDEMPOTENT,
            f"{method} is not idempotent: a retry could repeat its effect; set "
            "retry.idempotency_key to a header the API deduplicates on (e.g. "
            "Idempotency-Key), or drop retry"))
    headers = {name.lower() for name in options.get("headers") or {}}
    if key is not None and key.lower() in headers:
        found.append(Diagnostic.error(
            at(("options", "retry", "idempotency_key")), API_RETRY_KEY_HEADER,
            f"idempotency_key {key!r} is also in headers: the key header is set per call"))
    backoff = retry.get("backoff")
    timeout = options.get("timeout", 30)
    if backoff is not None and backoff >= timeout:
        found.append(Diagnostic.error(
            at(("options", "retry", "backoff")), API_RETRY_BACKOFF,
            f"backoff {backoff:g} s is not shorter than the timeout of {timeout:g} s, which "
            "bounds the whole call: no retry could ever be sent"))
    return found


def _check_slots_and_sections(
    document: SourceDocument, options: dict[str, Any], url: str
) -> list[Diagnostic]:
    at = document.location
    found: list[Diagnostic] = []
    slots = url_slots(url) if "{" in url else []  # a slot is a "{NAME}": most URLs have none
    authority = url.split("://", 1)[1].split("/", 1)[0] if "://" in url else ""
    if "{" in authority and any(f"{{{slot}}}" in authority for slot in slots):
        found.append(Diagnostic.error(at(("options", "url")), API_SLOT_IN_ORIGIN,
                                      "a {slot} may not be part of the scheme, host or port: "
                                      "arguments must never choose where a request goes"))
    for declared in options.get(PATH.key) or {}:
        if declared not in slots:
            found.append(Diagnostic.error(
                at(("options", PATH.key, declared), key=True), API_PATH_PARAM_UNUSED,
                f"path parameter {declared!r} has no {{{declared}}} slot in the URL"))
    owners: dict[str, tuple[str | int, ...]] = {
        slot: ("options", "url") for slot in slots
    }
    for section in (QUERY, BODY, FILES):
        for param_name in options.get(section.key) or {}:
            path = ("options", section.key, param_name)
            if param_name in owners:
                first = owners[param_name]
                where = "the URL" if first == ("options", "url") else first[1]
                found.append(Diagnostic.error(
                    at(path, key=True), API_PARAMETER_CONFLICT,
                    f"{param_name!r} is already an argument of {where} (line {at(first).line}); "
                    "a name may belong to only one of path_params, params, body and files"))
            else:
                owners[param_name] = path
    for param_name in options.get(TEMPLATE.key) or {}:
        owner = owners.get(param_name)
        if owner is not None and owner != ("options", "url"):
            found.append(Diagnostic.error(
                at(("options", TEMPLATE.key, param_name), key=True), API_PARAMETER_CONFLICT,
                f"{param_name!r} is already an argument of {owner[1]} (line {at(owner).line})"))
    path_specs = options.get(PATH.key) or {}
    for param_name, spec in (options.get(TEMPLATE.key) or {}).items():
        shared = path_specs.get(param_name)
        if shared and shared.get("type", "string") != spec.get("type", "string"):
            found.append(Diagnostic.error(
                at(("options", TEMPLATE.key, param_name, "type")), API_PARAMETER_CONFLICT,
                f"{param_name!r} fills a URL slot and a body slot with different types"))
    return found


def _check_body(document: SourceDocument, options: dict[str, Any]) -> list[Diagnostic]:
    at = document.location
    found: list[Diagnostic] = []
    method = options.get("method", DEFAULT_METHOD)
    template = options.get("body_template")
    has_template = "body_template" in options
    headers = {key.lower(): key for key in options.get("headers") or {}}
    if has_template and "body" in options:
        found.append(Diagnostic.error(at(("options", "body_template"), key=True),
                                      API_BODY_CONFLICT,
                                      "body and body_template are mutually exclusive: use one"))
    if has_template and "files" in options:
        found.append(Diagnostic.error(at(("options", "files"), key=True), API_FILES_CONFLICT,
                                      "files cannot be combined with body_template (multipart "
                                      "text fields come from a flat body)"))
    if "files" in options and "content-type" in headers:
        found.append(Diagnostic.error(
            at(("options", "headers", headers["content-type"]), key=True),
            API_FILES_CONTENT_TYPE,
            "do not set Content-Type with files: the multipart boundary is set automatically"))
    if method in METHODS_WITHOUT_BODY:
        for section in ("body", "body_template", "files"):
            if section in options:
                found.append(Diagnostic.error(
                    at(("options", section), key=True), API_BODY_ON_GET,
                    f"a {method} request cannot carry {section}; use params, or method POST"))
    used = set(template_slots(template)) if has_template else set()
    for declared in options.get(TEMPLATE.key) or {}:
        if declared not in used:
            found.append(Diagnostic.error(
                at(("options", TEMPLATE.key, declared), key=True), API_BODY_PARAM_UNUSED,
                f"body parameter {declared!r} is not used by body_template "
                f"(add {{{declared}}} to it or remove the entry)"))
    if isinstance(template, str) and "content-type" not in headers:
        found.append(Diagnostic.warning(
            at(("options", "body_template")), API_TEMPLATE_CONTENT_TYPE,
            "a string body_template is sent raw: set a Content-Type header so the server "
            "(and capc's value encoding) know its format"))
    found += _check_template_media_type(document, options, headers, used)
    return found


def _check_template_media_type(
    document: SourceDocument, options: dict[str, Any], headers: dict[str, str], used: set[str]
) -> list[Diagnostic]:
    """A string template with slots needs a Content-Type whose values capc can encode
    (the runtime's predicate; a type from a setting is checked there)."""
    key = headers.get("content-type")
    if key is None or not isinstance(options.get("body_template"), str):
        return []  # the common case: decided before the import below runs
    filled = used & set(options.get(TEMPLATE.key) or {})
    if not filled or options["body_template"] == "{" + min(filled) + "}":
        return []  # a template that is one whole slot is the value itself, as it is
    value = (options.get("headers") or {}).get(key)
    if not isinstance(value, str) or "${" in value:
        return []
    from compiler.runtime.api.media_types import unknown_media_type_problem

    problem = unknown_media_type_problem(value)
    if problem is None:
        return []
    return [Diagnostic.error(document.location(("options", "headers", key)),
                             API_TEMPLATE_MEDIA_TYPE, problem)]
