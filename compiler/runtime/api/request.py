"""Turn an api capability and one call's arguments into the exact request to send.

Two steps, both pure. :func:`resolve_endpoint` runs once per context: settings go into
the configuration strings (url, headers, body template), and header values are checked.
:func:`build_request` runs per call: arguments go into their slots, encoded for where
they land (URL path segment, query, JSON, form, XML, multipart). Nothing an argument
carries is ever read as a placeholder (see ``placeholders``).
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus
from xml.sax.saxutils import escape as xml_escape

from compiler.runtime.api.encoding import form_body, query_string
from compiler.runtime.api.media_types import (
    SlotEncoding,
    media_type_essence,
    slot_encoding,
    unknown_media_type_problem,
)
from compiler.runtime.egress.call import OutgoingRequest, UploadedFile
from compiler.runtime.egress.headers import breaks_header, configured_header_problem
from compiler.runtime.egress.urls import url_syntax_problem
from compiler.runtime.errors import CapabilityUnavailable, ToolCallRefused, UnsafeSettingError
from compiler.runtime.manifest.read import ApiEndpoint
from compiler.runtime.placeholders import (
    URL_PATH_SAFE,
    Setting,
    Slot,
    Text,
    Token,
    parse_template,
    render,
    resolve_string,
    single_slot,
    substitute_settings,
)

JSON_MEDIA_TYPE = "application/json"
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
REFUSED_PATH_VALUES = ("", ".", "..")
# What a setting in the host part may not hold: it would end the authority or hide it.
_NOT_IN_AUTHORITY = re.compile(r"[/?#@\\\s]")


@dataclass(frozen=True, slots=True)
class TemplateString:
    """A string of a JSON body template, as tokens (settings already substituted)."""

    tokens: tuple[Token, ...]

    def __repr__(self) -> str:
        # Settings are already substituted into the text: show the slots only.
        slots = [token.name for token in self.tokens if isinstance(token, Slot)]
        return f"TemplateString(slots={slots!r})"


@dataclass(frozen=True, slots=True)
class ResolvedEndpoint:
    """An endpoint with this context's settings in place; slots still open."""

    endpoint: ApiEndpoint
    url: tuple[Token, ...]
    headers: tuple[tuple[str, str], ...]
    body_template: Any
    media_type: str | None

    def __repr__(self) -> str:
        # url, headers and body hold this context's settings: show the reviewed endpoint.
        return (
            f"ResolvedEndpoint(method={self.endpoint.method!r}, url={self.endpoint.url!r}, "
            f"headers={[name for name, _ in self.headers]!r}, media_type={self.media_type!r})"
        )

    @property
    def has_text_template(self) -> bool:
        """Whether the body template is a raw string (sent as written, slots encoded)."""
        return isinstance(self.body_template, TemplateString)


def resolve_endpoint(endpoint: ApiEndpoint, settings: Mapping[str, str]) -> ResolvedEndpoint:
    """Substitute ``settings`` into the configuration strings of ``endpoint``.

    Raises UnresolvedPlaceholderError for a missing setting, UnsafeSettingError for a
    header that would carry CR, LF or NUL (the value itself is never put in a message) and
    CapabilityUnavailable for a header capc writes itself (``Host``, ``Content-Length`` ...).
    """
    for name in endpoint.headers:
        # Also checked at compile time; a manifest is data, so the runtime checks again.
        problem = configured_header_problem(name)
        if problem is not None:
            raise CapabilityUnavailable(problem)
    try:
        url = substitute_url_settings(
            parse_template(endpoint.url, endpoint.bound("path")), settings
        )
    except UnsafeSettingError as error:
        message = f"its URL is refused once its settings are in: {error}"
        raise CapabilityUnavailable(message) from None
    _check_declared_url(url)
    headers = []
    for name, template in endpoint.headers.items():
        value = resolve_string(template, settings)
        if breaks_header(name + value):
            raise UnsafeSettingError(
                f"header {name!r} would contain a CR, LF or NUL character after its settings "
                "were substituted"
            )
        headers.append((name, value))
    argument_headers = [endpoint.arguments[name].sent_as for name in endpoint.bound("header")]
    for name in argument_headers:
        problem = configured_header_problem(name)
        if problem is not None:  # a token (no CR, LF or NUL), and not one capc writes
            raise CapabilityUnavailable(problem)
    _refuse_repeated_headers([*headers, *((name, "") for name in argument_headers)])
    template_slots = endpoint.bound("template")
    body_template = endpoint.body_template
    media_type = _media_type(headers)
    if body_template is not None:
        body_template = _resolve_template(body_template, template_slots, settings)
        if isinstance(body_template, TemplateString) and single_slot(
            body_template.tokens
        ) is None and any(isinstance(token, Slot) for token in body_template.tokens):
            # A template that is one whole slot is the value itself: nothing to escape from.
            # The Content-Type may come from a setting, so the compiler cannot always know.
            problem = unknown_media_type_problem(media_type)
            if problem is not None:
                raise CapabilityUnavailable(problem)
    return ResolvedEndpoint(
        endpoint=endpoint,
        url=url,
        headers=tuple(headers),
        body_template=body_template,
        media_type=media_type,
    )


def _refuse_repeated_headers(headers: Sequence[tuple[str, str]]) -> None:
    """Two spellings of one header (``Content-Type`` and ``content-type``) are both sent,
    and servers disagree on which one counts: the body's type must have one reading."""
    seen: set[str] = set()
    for name, _ in headers:
        lowered = name.lower()
        if lowered in seen:
            raise CapabilityUnavailable(f"header {name!r} is configured more than once")
        seen.add(lowered)


def _check_declared_url(url: tuple[Token, ...]) -> None:
    """The compiler's URL rules on the URL with its settings in (an origin may be one)."""
    declared = render(url, lambda slot: "{" + slot + "}")
    problem = url_syntax_problem(declared)
    if problem is not None:
        raise CapabilityUnavailable(f"its URL is refused once its settings are in: "
                                    f"{problem.reason}")


def substitute_url_settings(
    tokens: tuple[Token, ...], settings: Mapping[str, str]
) -> tuple[Token, ...]:
    """Substitute settings into a URL, percent-encoding those in the path or the query.

    A setting in the scheme or host part goes in as written (the origin is checked against
    the address policy after resolution) but, after ``://``, may hold only host and port
    characters: a "host" setting that brings a ``/``, ``?``, ``#``, ``@`` or ``\\`` would
    rewrite the reviewed path or hide the real host (UnsafeSettingError). One in the path
    cannot add ``?`` or ``#``, and one in the query or fragment cannot add parameters:
    ``&``, ``=`` and ``#`` are encoded.
    """
    substitute_settings(tokens, settings)  # raises for every missing setting at once
    encoded: list[Token] = []
    seen = ""
    for token in tokens:
        if isinstance(token, Setting):
            value = settings[token.name]
            part = _url_part(seen)
            if part == "origin" and "://" in seen and _NOT_IN_AUTHORITY.search(value):
                raise UnsafeSettingError(
                    f"setting ${{{token.name}}} fills the URL's host and holds characters no "
                    "host has (/, ?, #, @, \\ or white space)"
                )
            if part == "path":
                value = quote(value, safe=URL_PATH_SAFE)
            elif part == "query":
                value = quote(value, safe="-._~")
            encoded.append(Text(value))
            seen += value
        else:
            encoded.append(token)
            seen += token.text if isinstance(token, Text) else "x"
    return substitute_settings(tuple(encoded), settings)


def _url_part(before: str) -> str:
    """Which part of a URL the text after ``before`` falls in: origin, path or query."""
    _, separator, rest = before.partition("://")
    if not separator:
        return "origin"
    if "?" in rest or "#" in rest:
        return "query"
    return "path" if "/" in rest else "origin"


def build_request(
    resolved: ResolvedEndpoint,
    arguments: Mapping[str, Any],
    files: Sequence[UploadedFile] = (),
) -> OutgoingRequest:
    """The request for one call; ToolCallRefused when an argument cannot be placed safely."""
    endpoint = resolved.endpoint
    bindings = endpoint.arguments
    url = _with_query(
        render(resolved.url, lambda name: _path_segment(name, arguments.get(name))),
        query_string([(bindings[name].sent_as, arguments[name], bindings[name].style)
                      for name in endpoint.bound("query") if name in arguments]),
    )
    headers = [*resolved.headers, *_header_arguments(endpoint, arguments)]
    body_fields = {
        bindings[name].sent_as: arguments[name]
        for name in endpoint.bound("body") if name in arguments
    }
    if endpoint.bound("file"):
        # httpx writes the multipart Content-Type (with its boundary) itself.
        headers = [(name, value) for name, value in headers if name.lower() != "content-type"]
        return OutgoingRequest(
            method=endpoint.method, url=url, headers=tuple(headers),
            form_fields=tuple((name, _scalar(name, value)) for name, value in body_fields.items()
                              if value is not None),
            files=tuple(files),
        )
    content: bytes | None = None
    if resolved.body_template is not None:
        if resolved.has_text_template:
            content = _text_body(resolved, arguments)
        else:
            content = _json_bytes(_render_json(resolved.body_template, arguments))
            headers = _with_default_content_type(headers, JSON_MEDIA_TYPE)
    elif endpoint.bound("body"):
        if resolved.media_type == FORM_MEDIA_TYPE:
            content = form_body(body_fields)
        else:
            content = _json_bytes(body_fields)
            headers = _with_default_content_type(headers, JSON_MEDIA_TYPE)
    return OutgoingRequest(
        method=endpoint.method, url=url, headers=tuple(headers), content=content
    )


def _text_body(resolved: ResolvedEndpoint, arguments: Mapping[str, Any]) -> bytes | None:
    """A string template's body. One that is exactly ``"{slot}"`` under a JSON or an
    unknown Content-Type is the whole body (SPEC §10's native leaf, at the top): the
    argument's JSON for a JSON type (an array, a number, a free-form object, a string in
    quotes), its text for another type (``application/octet-stream``); left out, no body."""
    tokens = resolved.body_template.tokens
    whole = single_slot(tokens)
    encoding = slot_encoding(resolved.media_type)
    if whole is not None and encoding in (SlotEncoding.JSON, SlotEncoding.UNKNOWN):
        value = arguments.get(whole)
        if value is None:
            return None
        if encoding is SlotEncoding.JSON:
            return _json_bytes(value)
        return _scalar(whole, value).encode("utf-8")
    return render(
        tokens, lambda name: _encode_for(resolved.media_type, name, arguments.get(name))
    ).encode("utf-8")


def _header_arguments(endpoint: ApiEndpoint, arguments: Mapping[str, Any]
                      ) -> list[tuple[str, str]]:
    """The header arguments given (a null or absent one is not sent), each value one line:
    a CR, LF or NUL would end the header and start another, so the call is refused."""
    sent: list[tuple[str, str]] = []
    for name in endpoint.bound("header"):
        value = arguments.get(name)
        if value is None:
            continue
        text = _scalar(name, value)
        if breaks_header(text):
            raise ToolCallRefused(f"argument {name!r} is sent as a header and cannot hold a "
                                  "line break or NUL character")
        sent.append((endpoint.arguments[name].sent_as, text))
    return sent


def file_content_type(filename: str) -> str:
    """The media type of an upload, guessed from its file name."""
    return mimetypes.guess_type(filename)[0] or "application/octet-stream"


def _resolve_template(node: Any, slots: list[str], settings: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return TemplateString(substitute_settings(parse_template(node, slots), settings))
    if isinstance(node, Mapping):
        return {
            resolve_string(key, settings): _resolve_template(value, slots, settings)
            for key, value in node.items()
        }
    if isinstance(node, tuple | list):
        return tuple(_resolve_template(item, slots, settings) for item in node)
    return node


def _render_json(node: Any, arguments: Mapping[str, Any]) -> Any:
    if isinstance(node, TemplateString):
        slot = single_slot(node.tokens)
        if slot is not None:
            # A leaf that is exactly "{slot}" keeps the argument's JSON type.
            return arguments.get(slot)
        return render(node.tokens, lambda name: _scalar(name, arguments.get(name)))
    if isinstance(node, Mapping):
        return {key: _render_json(value, arguments) for key, value in node.items()}
    if isinstance(node, tuple):
        return [_render_json(item, arguments) for item in node]
    return node


def _scalar(name: str, value: Any) -> str:
    """A value that must travel as one string (a path segment, a multipart text field, a
    slot inside text): structured values are the compiler's to refuse, and refused here too."""
    if isinstance(value, list | tuple | Mapping):
        raise ToolCallRefused(f"argument {name!r} is an array or object and goes where only "
                              "one string fits")
    return _text(value)


def _path_segment(name: str, value: Any) -> str:
    text = _scalar(name, value)
    if value is None or text in REFUSED_PATH_VALUES:
        raise ToolCallRefused(
            f"argument {name!r} goes into the URL path and cannot be {text!r}; "
            "give the actual identifier"
        )
    # safe="" encodes "/" too: a value can never leave its path segment.
    return quote(text, safe="")


def _with_query(url: str, encoded: str) -> str:
    if not encoded:
        return url
    base, hash_mark, fragment = url.partition("#")
    separator = "" if base.endswith(("?", "&")) else ("&" if "?" in base else "?")
    return f"{base}{separator}{encoded}{hash_mark}{fragment}"


def _encode_for(media_type: str | None, name: str, value: Any) -> str:
    if value is None:
        return ""
    encoding = slot_encoding(media_type)
    if encoding is not SlotEncoding.JSON:
        value = _scalar(name, value)
    if encoding is SlotEncoding.FORM:
        return quote_plus(_text(value))
    if encoding is SlotEncoding.JSON:
        # Inside a JSON text: strings are escaped (the template supplies the quotes),
        # numbers and booleans are written as JSON literals.
        return json.dumps(value, ensure_ascii=False)[1:-1] if isinstance(value, str) else (
            json.dumps(value)
        )
    if encoding is SlotEncoding.MARKUP:
        return xml_escape(_text(value), {'"': "&quot;", "'": "&apos;"})
    if encoding is SlotEncoding.UNKNOWN:
        # resolve_endpoint refuses such templates; never fill one raw.
        raise ToolCallRefused("the request body's Content-Type has no safe slot encoding")
    return _text(value)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _media_type(headers: Sequence[tuple[str, str]]) -> str | None:
    for name, value in headers:
        if name.lower() == "content-type":
            return media_type_essence(value)
    return None


def _with_default_content_type(
    headers: list[tuple[str, str]], media_type: str
) -> list[tuple[str, str]]:
    if any(name.lower() == "content-type" for name, _ in headers):
        return headers
    return [*headers, ("Content-Type", media_type)]
