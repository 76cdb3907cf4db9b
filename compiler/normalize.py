"""Valid capability documents → manifest entries (``compiler.runtime.manifest.model``).

Defaults are filled in here, from the model's constants, so the runtime, ``diff`` and
``docs`` never guess; the entries are frozen, and only ``manifest_json`` turns them into
the manifest's JSON.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from compiler.output_shaping import shaped_output_schema
from compiler.runtime.descriptors import split_namespace
from compiler.runtime.manifest.fields import freeze
from compiler.runtime.manifest.model import (
    DEFAULT_ARGUMENT_TYPE,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_METHOD,
    DEFAULT_TIMEOUT,
    ApiEndpoint,
    ApiToolEntry,
    ArgumentBinding,
    CapabilityEntry,
    McpServerEntry,
    SourceLocation,
    ToolProvenance,
    internal_codes,
    tool_name,
    tool_name_path,
)
from compiler.runtime.manifest.parameters import (
    BODY,
    DEFAULT_ARRAY_STYLE,
    FILES,
    HEADER,
    PARAMETER_SECTIONS,
    PATH,
    QUERY,
    STRUCTURED_TYPES,
    TEMPLATE,
    WIRE_NAME,
    accepted_shape,
    parameter_schema,
    with_wire_names,
)
from compiler.runtime.placeholders import placeholders_in, template_slots, url_slots
from compiler.source.documents import SourceDocument

DEFAULT_RETRY_ON = (429, 502, 503, 504, "connect")
DEFAULT_RETRY_BACKOFF = 0.5
MCP_KNOWN_OPTIONS = ("server_label", "server_url", "require_approval", "headers", "allowed_tools",
                     "unpinned")
METADATA_KEYS = ("is_default", "ordering", "access_type")


def source_of(document: SourceDocument, path: tuple[str | int, ...] = ()) -> SourceLocation:
    """Where a node of ``document`` is (its first line for the whole document)."""
    if not path:
        return SourceLocation(document.path, document.first_line)
    # ``document.location(path).line``, without making the Location (three per api tool).
    line, _ = document.positions.locate(path)
    return SourceLocation(document.path, document.source_line(line))


def capability_entry(document: SourceDocument) -> CapabilityEntry:
    """The manifest entry of one valid Capability document."""
    data = document.data
    options = data.get("options") or {}
    kind = data["type"]
    # Each entry is made once, with its per-type block: dataclasses.replace would make it
    # twice, and this runs for every capability of a tree.
    codes: tuple[str, ...] = ()
    mcp = api = tool = None
    if kind == "internal":
        codes = internal_codes(data["code"], options.get("codes"))
    elif kind == "mcp":
        mcp = _mcp_entry(options)
    else:
        api, tool = _api_entry(document, options)
    return CapabilityEntry(
        code=data["code"],
        name=data["name"],
        description=data.get("description"),
        type=kind,
        metadata=freeze({key: data[key] for key in METADATA_KEYS if key in data}),
        when=freeze(data.get("when")),
        source=source_of(document),
        internal_codes=codes,
        mcp=mcp,
        api=api,
        tool=tool,
        origin=freeze(data["origin"]) if "origin" in data else None,
    )


def stored_entry(document: SourceDocument) -> CapabilityEntry:
    """A stand-in for the entry of a valid api capability whose manifest bytes are stored
    (compiler/cache/entry_fragments.py): what the compile reads of an entry no override,
    pin or profile reaches (its code, name, type, source, and its tool's names and where
    the name was given), none of its schemas or blocks (hundreds of MiB in a large tree).
    Never written: the manifest takes the stored bytes, and the entry is built whole
    should it not (pipeline._build_entries)."""
    data = document.data
    name = tool_name(data)
    return CapabilityEntry(
        code=data["code"], name=data["name"], description=None, type=data["type"],
        metadata=_NOTHING, when=None, source=source_of(document),
        tool=ApiToolEntry(name=name, original_name=name, description="",
                          input_schema=_NOTHING, namespace=split_namespace(name)[0],
                          provenance=ToolProvenance(name=source_of(
                              document, tool_name_path(data.get("options") or {})))))


_NOTHING: Any = MappingProxyType({})


def _mcp_entry(options: dict[str, Any]) -> McpServerEntry:
    headers = dict(options.get("headers") or {})
    return McpServerEntry(
        server_label=options["server_label"],
        server_url=options["server_url"],
        require_approval=freeze(options.get("require_approval")),
        headers=freeze(headers),
        allowed_tools=freeze(options.get("allowed_tools")),
        extra=freeze({k: v for k, v in options.items() if k not in MCP_KNOWN_OPTIONS}),
        placeholders=tuple(placeholders_in([options["server_url"], headers])),
        unpinned=options.get("unpinned"),
    )


def _api_entry(
    document: SourceDocument, options: dict[str, Any]
) -> tuple[ApiEndpoint, ApiToolEntry]:
    url: str = options["url"]
    headers = dict(options.get("headers") or {})
    template = options.get("body_template")
    arguments = _tool_arguments(options, url, template)
    api = ApiEndpoint(
        method=options.get("method", DEFAULT_METHOD),
        url=url,
        headers=freeze(headers),
        body_template=freeze(template),
        timeout=float(options.get("timeout", DEFAULT_TIMEOUT)),
        max_response_bytes=int(options.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)),
        arguments=MappingProxyType(arguments.bindings),
        placeholders=tuple(placeholders_in([url, headers, template])),
        **_resilience_entries(options),
    )
    return api, _api_tool(document, options, arguments)


class _ToolArguments:
    """An api tool's arguments as they are added: bindings, schema properties, required."""

    __slots__ = ("bindings", "properties", "required")

    def __init__(self) -> None:
        self.bindings: dict[str, ArgumentBinding] = {}
        self.properties: dict[str, dict[str, Any]] = {}
        self.required: list[str] = []

    def add(self, name: str, binding: str, spec: dict[str, Any], *,
            always_required: bool) -> None:
        """One parameter bound at ``binding`` (a second binding of a name joins the first)."""
        argument = self.bindings.get(name)
        if argument is not None:  # a URL slot that is also a template slot: one argument
            self.bindings[name] = replace(argument, bindings=(*argument.bindings, binding))
            return
        kind = spec.get("type", DEFAULT_ARGUMENT_TYPE)
        schema = parameter_schema(spec)
        wire = spec.get(WIRE_NAME)
        if kind in STRUCTURED_TYPES:
            self.bindings[name] = ArgumentBinding(
                name, (binding,), kind, False, _query_style(binding, kind, spec),
                freeze(with_wire_names(accepted_shape(schema), spec)), wire)
        elif wire is not None:
            self.bindings[name] = ArgumentBinding(name, (binding,), kind, wire=wire)
        else:  # a scalar: no query style, no accepted shape
            self.bindings[name] = ArgumentBinding(name, (binding,), kind)
        self.properties[name] = schema
        if (always_required or spec.get("required", False)) and "default" not in spec:
            self.required.append(name)

    def add_file(self, name: str, spec: dict[str, Any]) -> None:
        """One ``files`` entry: a document id, or a list of them when ``multiple``."""
        multiple = bool(spec.get("multiple", False))
        self.bindings[name] = ArgumentBinding(name, (FILES.binding,), "integer", multiple)
        document_id: dict[str, Any] = {"type": "integer"}
        self.properties[name] = (
            {"type": "array", "items": document_id, "minItems": 1} if multiple else document_id
        )
        if spec.get("description"):
            self.properties[name]["description"] = spec["description"]
        if spec.get("required", False):
            self.required.append(name)


def _tool_arguments(options: dict[str, Any], url: str, template: Any) -> _ToolArguments:
    """Every argument of an api tool, section by section in the manifest's order."""
    arguments = _ToolArguments()
    path_specs = options.get(PATH.key) or {}
    method = options.get("method", "GET")
    for slot in url_slots(url):
        arguments.add(slot, PATH.binding, _path_slot_spec(path_specs.get(slot), slot, method,
                                                          url), always_required=True)
    for section in (QUERY, HEADER, BODY):
        for name, spec in (options.get(section.key) or {}).items():
            arguments.add(name, section.binding, spec, always_required=False)
    if "body_template" in options:
        template_specs = options.get(TEMPLATE.key) or {}
        for slot in template_slots(template):
            spec = template_specs.get(slot) or path_specs.get(slot) or {}
            arguments.add(slot, TEMPLATE.binding, spec,
                          always_required=slot not in template_specs
                          or bool(spec.get("required", False)))
    for name, spec in (options.get(FILES.key) or {}).items():
        arguments.add_file(name, spec)
    return arguments


def _api_tool(document: SourceDocument, options: dict[str, Any],
              arguments: _ToolArguments) -> ApiToolEntry:
    """The tool an api capability shows the model: name, description, schemas, sources."""
    name = tool_name(document.data)
    output_schema = (None if "output_schema" not in options
                     else freeze(shaped_output_schema(options).schema))
    schema_path = next((("options", section.key) for section in PARAMETER_SECTIONS
                        if section.key in options), ("options", "url"))
    return ApiToolEntry(
        name=name,
        original_name=name,
        description=options["description"],
        input_schema=freeze({
            "type": "object",
            "properties": arguments.properties,
            "required": arguments.required,
            "additionalProperties": False,
        }),
        # SPEC §16: the schema of what the tool returns after shaping (None: text only).
        output_schema=output_schema,
        namespace=split_namespace(name)[0],
        provenance=ToolProvenance(
            name=source_of(document, tool_name_path(options)),
            description=source_of(document, ("options", "description")),
            input_schema=source_of(document, schema_path),
            output_schema=None if output_schema is None
            else source_of(document, ("options", "output_schema")),
        ),
        strict=bool(options.get("strict", False)),
    )


def _path_slot_spec(
    spec: dict[str, Any] | None, slot: str, method: str, url: str
) -> dict[str, Any]:
    """A path slot's spec; one without a description gets one naming where it goes, so the
    model is never shown a bare string (``path segment `id` of GET /items/{id}``)."""
    spec = dict(spec or {})
    if "description" not in spec:
        path = "/" + url.partition("://")[2].partition("/")[2].split("?", 1)[0].split("#", 1)[0]
        spec["description"] = f"path segment `{slot}` of {method} {path}"
    return spec


def _resilience_entries(options: dict[str, Any]) -> dict[str, Any]:
    """``response``, ``retry`` and ``max_concurrency`` (SPEC §8), each only when set, so
    the manifest of a tool without them stays as it was."""
    entries: dict[str, Any] = {}
    if options.get("response"):
        response = options["response"]
        entries["response"] = freeze({key: response.get(key)
                                      for key in ("select", "max_items", "max_chars")})
    if "retry" in options:
        retry = options["retry"]
        on_errors = retry.get("on_errors", DEFAULT_RETRY_ON)
        entries["retry"] = freeze({
            "attempts": int(retry["attempts"]),
            "on_errors": sorted(e for e in on_errors if isinstance(e, int))
            + (["connect"] if "connect" in on_errors else []),
            "backoff": float(retry.get("backoff", DEFAULT_RETRY_BACKOFF)),
            "idempotency_key": retry.get("idempotency_key"),
        })
    if "max_concurrency" in options:
        entries["max_concurrency"] = int(options["max_concurrency"])
    return entries


def _query_style(binding: str, kind: str, spec: dict[str, Any]) -> str | None:
    """The recorded query style of an array or object in the query (None elsewhere)."""
    if binding != QUERY.binding or kind not in STRUCTURED_TYPES:
        return None
    style: str | None = spec.get("style", DEFAULT_ARRAY_STYLE if kind == "array" else None)
    return style
