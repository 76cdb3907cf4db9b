"""ToolTest cases as values: read from located documents, written back as YAML.

A case is one call of one api tool: the arguments, the settings it resolved (by name),
the chat documents it uploads, every HTTP exchange of the call in order (a retry or a
redirect is one more exchange) and the text the model read (``result``, or ``error``
when the call failed). Bodies are text when they are UTF-8, else base64.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from compiler.diagnostics import Location
from compiler.runtime.manifest.fields import thaw
from compiler.schema.legacy import CURRENT_API_VERSION as API_VERSION
from compiler.source.documents import SourceDocument

KIND = "ToolTest"
Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """The request a case expects on the wire (settings as ``${NAME}``)."""

    method: str
    url: str
    headers: Headers
    body: bytes


@dataclass(frozen=True, slots=True)
class RecordedResponse:
    """The reply the service gave (headers on the allow-list, body decoded)."""

    status: int
    headers: Headers
    body: bytes


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request of a call and its reply."""

    request: RecordedRequest
    response: RecordedResponse


@dataclass(frozen=True, slots=True)
class ToolCase:
    """One case, and where it was written (for located failures)."""

    code: str
    name: str
    arguments: Mapping[str, Any]
    settings: tuple[str, ...]
    documents: Mapping[int, tuple[str, bytes]]
    exchanges: tuple[Exchange, ...]
    result: str | None
    error: str | None
    source: SourceDocument | None = None
    index: int = 0

    def location(self, *path: str | int) -> Location:
        """Where field ``path`` of this case is written (the case itself for ``()``)."""
        if self.source is None:
            return Location("<case>")
        return self.source.location(("cases", self.index, *path))


def _body(raw: Mapping[str, Any]) -> bytes:
    if "body_base64" in raw:
        try:
            return base64.b64decode(raw["body_base64"], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("body_base64 is not valid base64") from None
    return str(raw.get("body", "")).encode("utf-8")


def _headers(raw: Mapping[str, Any]) -> Headers:
    return tuple((str(name), str(value)) for name, value in (raw.get("headers") or {}).items())


def _document_bytes(raw: Mapping[str, Any]) -> bytes:
    if "content_base64" in raw:
        return base64.b64decode(raw["content_base64"], validate=True)
    return str(raw["content"]).encode("utf-8")


def case_of(document: SourceDocument, index: int) -> ToolCase:
    """Case ``index`` of a schema-valid ToolTest document; ValueError for a bad base64."""
    data = document.data
    raw = data["cases"][index]
    exchanges = tuple(
        Exchange(
            RecordedRequest(item["request"]["method"], item["request"]["url"],
                            _headers(item["request"]), _body(item["request"])),
            RecordedResponse(item["response"]["status"], _headers(item["response"]),
                             _body(item["response"])),
        )
        for item in raw["exchanges"]
    )
    documents = {int(key): (value["filename"], _document_bytes(value))
                 for key, value in (raw.get("documents") or {}).items()}
    return ToolCase(
        code=data["code"], name=raw["name"], arguments=dict(raw.get("arguments") or {}),
        settings=tuple(raw.get("settings") or ()), documents=documents, exchanges=exchanges,
        result=raw.get("result"), error=raw.get("error"), source=document, index=index,
    )


@dataclass(frozen=True, slots=True)
class _CasesAtTests:
    """A capability's positions, asked as a ToolTest's: ``cases`` are its ``tests``."""

    positions: Any

    def locate(self, path: tuple[Any, ...], *, key: bool = False) -> tuple[int, int]:
        """Where ``path`` of the ToolTest view is in the capability."""
        if path and path[0] == "cases":
            path = ("tests", *path[1:])
        located: tuple[int, int] = self.positions.locate(path, key=key)
        return located


def inline_tool_test(document: SourceDocument) -> SourceDocument | None:
    """A capability's ``tests:`` as a ToolTest document located in the capability (None
    when it has none), so inline cases are checked and replayed like a file's."""
    data = document.data
    if not isinstance(data, dict) or "tests" not in data:
        return None
    view = {"apiVersion": API_VERSION, "kind": KIND, "code": data.get("code"),
            "cases": data["tests"]}
    return SourceDocument(document.path, document.index, view, _CasesAtTests(document.positions),
                          document.line, document.source_line)


def is_tool_test(document: SourceDocument) -> bool:
    """True for a ``capc/v1`` ``ToolTest`` document."""
    return is_tool_test_data(document.data)


def is_tool_test_data(data: Any) -> bool:
    """True for the data of a ``capc/v1`` ``ToolTest`` document."""
    return isinstance(data, dict) and data.get("apiVersion") == API_VERSION \
        and data.get("kind") == KIND


def _text_or_base64(key: str, body: bytes) -> dict[str, str]:
    if not body:
        return {}
    try:
        return {key: body.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{key}_base64": base64.b64encode(body).decode("ascii")}


def case_json(case: ToolCase) -> dict[str, Any]:
    """The case as the JSON-shaped mapping a ToolTest document holds."""
    written: dict[str, Any] = {"name": case.name, "arguments": thaw(case.arguments)}
    if case.settings:
        written["settings"] = list(case.settings)
    if case.documents:
        written["documents"] = {
            str(key): {"filename": filename, **_text_or_base64("content", content)}
            for key, (filename, content) in sorted(case.documents.items())}
    written["exchanges"] = [
        {"request": {"method": item.request.method, "url": item.request.url,
                     **({"headers": dict(item.request.headers)} if item.request.headers
                        else {}),
                     **_text_or_base64("body", item.request.body)},
         "response": {"status": item.response.status,
                      **({"headers": dict(item.response.headers)} if item.response.headers
                         else {}),
                      **_text_or_base64("body", item.response.body)}}
        for item in case.exchanges
    ]
    if case.error is not None:
        written["error"] = case.error
    else:
        written["result"] = case.result or ""
    return written


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings as literal blocks, so a diff reads line by line."""


def _represent_string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style where a literal block cannot hold the value.
    return dumper.represent_scalar("tag:yaml.org,2002:str", value,
                                   style="|" if "\n" in value else None)


_Dumper.add_representer(str, _represent_string)


def tool_test_yaml(code: str, cases: Sequence[ToolCase]) -> str:
    """A whole ToolTest document holding ``cases`` (for ``capc record``)."""
    return yaml_text({"apiVersion": API_VERSION, "kind": KIND, "code": code,
                      "cases": [case_json(case) for case in cases]})


def yaml_text(document: Mapping[str, Any]) -> str:
    """One ToolTest document as capc writes it: block style, keys in their order."""
    return yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=100)
