"""One operation → the ``options`` of a capc ``api`` capability (SPEC §10/§11).

Path parameters become ``{slot}``s (renamed to snake_case when needed: only capc reads
the slot's name), query parameters ``params`` with the §10 ``style`` that matches the
document's ``style``/``explode``, request bodies ``body`` (JSON, form-urlencoded) or
``body`` + ``files`` (multipart). What §10 cannot say is left out with a note when it is
optional; when it is required the operation is skipped with the reason (the tool could
not send a request the API accepts).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.authoring.openapi.body_media import FORM as FORM  # the importer's name for it
from compiler.authoring.openapi.body_media import JSON as JSON_TYPE
from compiler.authoring.openapi.body_media import BodyKind, pick_media
from compiler.authoring.openapi.document_text import clean_text
from compiler.authoring.openapi.naming import (
    argument_name,
    is_identifier,
    setting_name,
    slot_name,
    wire_name_problem,
)
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.schemas import (
    BINARY_MARK,
    SCALARS,
    Budget,
    SchemaWalk,
    Unexpressible,
)
from compiler.authoring.openapi.security import (
    Credentials,
    Setting,
    credential_header,
    is_credential_header,
)
from compiler.authoring.openapi.sinks import header_text
from compiler.runtime.egress.headers import configured_header_problem
from compiler.runtime.manifest.parameters import (
    BODY,
    FILES,
    HEADER,
    PARAMETER_SECTIONS,
    PATH,
    QUERY,
    TEMPLATE,
    WIRE_NAME,
)
from compiler.runtime.placeholders import setting_placeholder

_WHOLE_BODY_NAMES = ("body", "request_body", "payload")
_SLOT = re.compile(r"\{([^{}]*)\}")
# A query parameter that names the API's version (``api-version``): a reviewed fact, sent as
# its default or a setting the team fills, never a model's choice.
_VERSION_NAME = re.compile(r"(?i)^api[-_.]?version$")
_VERSION_HEADER = re.compile(r"(?i)(?:^|-)version$")
_SECTION_WORDS = {PATH.key: "path", QUERY.key: "query", HEADER.key: "header",
                  BODY.key: "body", FILES.key: "file", "body_params": "body"}
# Headers capc writes from what it sends: a parameter declaring one is left to capc.
_WRITTEN_BY_CAPC = frozenset({"content-type"})
_ARRAY_STYLES = {("form", True): "repeat", ("form", False): "comma",
                 ("deepObject", True): "brackets", ("deepObject", False): "brackets"}


@dataclass(slots=True)
class _Arguments:
    """The argument tables of one operation, one per section of the model's table."""

    tables: dict[str, dict[str, Any]] = dataclasses.field(
        default_factory=lambda: {section.key: {} for section in PARAMETER_SECTIONS})

    @property
    def path_params(self) -> dict[str, Any]:
        """Path slots."""
        return self.tables[PATH.key]

    @property
    def params(self) -> dict[str, Any]:
        """Query parameters."""
        return self.tables[QUERY.key]

    @property
    def headers(self) -> dict[str, Any]:
        """Header parameters (not credentials: those are configured headers)."""
        return self.tables[HEADER.key]

    @property
    def body(self) -> dict[str, Any]:
        """Body fields."""
        return self.tables[BODY.key]

    @property
    def files(self) -> dict[str, Any]:
        """Multipart file fields."""
        return self.tables[FILES.key]

    def claim(self, name: str, where: str, required: bool, notes: list[str]) -> bool:
        """Whether ``name`` is free (§2.1: one name, one place). A name already taken is
        left out when this use of it is optional (Kubernetes' ``dryRun`` in the query and
        in a DeleteOptions body, its proxy ``path`` slot and ``?path=``), with a note;
        a required second use cannot be sent, and the operation is skipped."""
        for section in PARAMETER_SECTIONS:
            if name in self.tables[section.key]:
                taken = _SECTION_WORDS[section.key]
                if required:
                    raise Unexpressible(f"argument {name!r} is both a {taken} and a "
                                        f"{where} parameter")
                notes.append(f"optional {where} parameter {name!r} left out: the {taken} "
                             "parameter of the same name is the argument")
                return False
        return True


class OperationMapper:
    """Maps the operations of one document; ``walk.notes`` collects what was bent."""

    def __init__(self, refs: References, budget: Budget, credentials: Credentials,
                 api: str = "api") -> None:
        self.refs = refs
        self.walk = SchemaWalk(refs, budget)
        self.credentials = credentials
        self.arguments = _Arguments()
        self.api = api  # the title words settings are named after
        self.body_template: str | None = None  # a body that is one whole argument

    @property
    def notes(self) -> list[str]:
        """What could not be kept as the document says it."""
        return self.walk.notes

    def url_path(self, path: str) -> str:
        """The document's path with each ``{name}`` as a capc ``{slot}``; a literal query
        written into the path (``/v1/things?beta=true``) is kept as it is. A ``#fragment``
        (``/items#byId``: only telling apart paths written twice) is dropped with a note;
        characters legal in a segment (``$ @ : ! ' ( ) * + , ; =``) are kept as written,
        but a ``$`` before a slot is sent as ``%24`` (``${`` is capc's setting syntax)."""
        path, hash_mark, fragment = path.partition("#")
        if hash_mark:
            self.notes.append(f"path fragment {('#' + fragment)[:80]!r} dropped: a URL sends "
                              "none (it only tells apart paths the document writes twice)")
        path, mark, query = path.partition("?")
        if any(segment in ("..", ".") for segment in path.split("/")) \
                or "{" in query or "$" in query:
            raise Unexpressible(f"path {path + mark + query!r} holds '..' or a slot or '$' in "
                                "its query")
        path = path.replace("${", "%24{")
        return _SLOT.sub(lambda m: "{" + slot_name(m.group(1)) + "}", path) + mark + query

    def parameters(self, item: Target, operation: Target, api: str) -> None:
        """Path, query, header and cookie parameters (the operation's win over the path's)."""
        chosen: dict[tuple[str, str], Target] = {}
        for holder in (item, operation):
            for index, _ in enumerate(_list(holder.value.get("parameters"))):
                written = Target(holder.file, (*holder.path, "parameters", index),
                                 holder.value["parameters"][index])
                param = self.refs.follow(written)
                if isinstance(param.value, Mapping) and isinstance(param.value.get("name"), str):
                    chosen[(str(param.value["name"]), str(param.value.get("in")))] = param
        # Path slots first: they are always required, so they keep a shared name.
        for (name, where), param in sorted(chosen.items(), key=lambda c: c[0][1] != "path"):
            if where == "path":
                self._path(name, param)
            elif where == "query":
                self._query(name, param)
            elif where == "header":
                self._header(name, param, api)
            elif param.value.get("required") is True:
                raise Unexpressible(f"required {where} parameter {name!r}")
            else:
                self.notes.append(f"optional {where} parameter {name!r} left out")

    def _schema(self, param: Target, label: str) -> dict[str, Any]:
        value = param.value
        if isinstance(value.get("schema"), Mapping):
            entry = self.walk.entry(Target(param.file, (*param.path, "schema"),
                                           value["schema"]), label)
        elif isinstance(value.get("content"), Mapping) and value["content"]:
            media, spec = next(iter(value["content"].items()))
            schema = spec.get("schema") if isinstance(spec, Mapping) else None
            entry = self.walk.entry(Target(param.file, (*param.path, "content", media, "schema"),
                                           schema or {}), label) if schema else None
            if entry is not None and entry["type"] not in SCALARS:
                entry["style"] = "json"
        else:
            entry = None
        entry = dict(entry or {"type": "string"})
        description = value.get("description")
        if isinstance(description, str) and description.strip():
            entry["description"] = clean_text(description, 500)
        return entry

    def _path(self, name: str, param: Target) -> None:
        entry = self._schema(param, name)
        if entry["type"] not in SCALARS:
            raise Unexpressible(f"path parameter {name!r} is an {entry['type']}")
        slot = slot_name(name)
        self.arguments.claim(slot, "path", True, self.notes)
        entry.pop("nullable", None)
        self.arguments.path_params[slot] = {**entry, "required": True}

    def _query(self, name: str, param: Target) -> None:
        required = param.value.get("required") is True
        entry = self._schema(param, name)
        style = str(param.value.get("style", "form"))
        explode = param.value.get("explode", style == "form") is True
        if entry["type"] == "object" and entry.get("style") != "json":
            if style == "deepObject":
                entry["style"] = "deep_object"
            elif style == "form" and explode:  # each property is its own query parameter
                for field_name, field in entry.get("properties", {}).items():
                    field = dict(field)
                    field_required = field.pop("required", False) and required
                    self._add_query(field_name, field, field_required)
                return
            else:
                return self._drop(required, f"query object {name!r} in style {style!r}")
        elif entry["type"] == "array" and entry.get("style") != "json":
            if entry["items"]["type"] not in SCALARS:
                return self._drop(required, f"query array of {entry['items']['type']}s "
                                            f"{name!r}")
            if (style, explode) not in _ARRAY_STYLES:
                return self._drop(required, f"query array {name!r} in style {style!r}")
            entry["style"] = _ARRAY_STYLES[(style, explode)]
        self._add_query(name, entry, required)

    def _add_query(self, name: str, entry: dict[str, Any], required: bool) -> None:
        wire = entry.pop(WIRE_NAME, name)  # a field of an exploded object may carry one
        if _VERSION_NAME.match(wire) and entry["type"] in SCALARS and \
                (required or "default" in entry):
            return self._fixed_query(wire, entry)
        argument = self._argument_name(wire, required, "query parameter")
        if argument is None:
            return
        if argument != wire:
            entry = {**entry, WIRE_NAME: wire}
        if self.arguments.claim(argument, "query", required, self.notes):
            self.arguments.params[argument] = {**entry, "required": required}

    def _argument_name(self, wire: str, required: bool, what: str) -> str | None:
        """The argument for document name ``wire`` (itself when it is an identifier), or
        None when it cannot be sent as written (left out, or the operation skipped)."""
        if is_identifier(wire):
            return wire
        problem = wire_name_problem(wire)
        if problem is None:
            return argument_name(wire)
        if required:
            raise Unexpressible(f"required {what} {wire[:80]!r} {problem}")
        self.notes.append(f"optional {what} {wire[:80]!r} left out: it {problem}")
        return None

    def _fixed_query(self, name: str, entry: dict[str, Any]) -> None:
        """A query parameter naming the API version (``api-version``): its default (or only
        value) in the URL, else a setting the team fills, listed with the others."""
        values = entry.get("enum", ())
        fixed = entry.get("default", values[0] if len(values) == 1 else None)
        if fixed is not None:
            self.credentials.query.setdefault(name, _literal(fixed))
            self.notes.append(f"query parameter {name!r} sent as {fixed!r}")
            return
        setting = Setting(setting_name(self.api, name),
                          f"the value of query parameter {name!r}")
        self.credentials.query.setdefault(name, setting_placeholder(setting.name))
        self.credentials.need(setting)

    def _header(self, name: str, param: Target, api: str) -> None:
        if is_credential_header(name) and header_text(name, "") is None:
            credential_header(self.credentials, api, name)
            return
        required = param.value.get("required") is True
        if name.lower() in _WRITTEN_BY_CAPC:
            self.notes.append(f"header parameter {name!r} left out: capc sends the "
                              "Content-Type of the body it writes")
            return
        problem = configured_header_problem(name)
        if problem is not None:
            return self._drop(required, f"header parameter {name[:80]!r} ({problem})")
        entry = self._schema(param, name)
        values = entry.get("enum", ())
        if len(values) == 1 and entry["type"] in SCALARS and (required or "default" in entry):
            # One value the API accepts: a fixed header the reviewer reads, not an argument.
            unsendable = header_text(name, _literal(values[0]))
            if unsendable is not None:
                return self._drop(required, unsendable)
            self.credentials.headers.setdefault(name, _literal(values[0]))
            self.notes.append(f"header {name!r} sent as {values[0]!r} (its only value)")
            return
        if _VERSION_HEADER.search(name) and entry["type"] in SCALARS:
            return self._fixed_header(name, entry, required)
        if entry["type"] not in SCALARS:
            return self._drop(required, f"header parameter {name!r} of type {entry['type']}")
        entry.pop("style", None)
        argument = self._argument_name(name, required, "header parameter")
        if argument is not None and self.arguments.claim(argument, "header", required,
                                                         self.notes):
            self.arguments.headers[argument] = {**entry, WIRE_NAME: name,
                                                "required": required}

    def _fixed_header(self, name: str, entry: dict[str, Any], required: bool) -> None:
        """A header naming the API version (``anthropic-version``, ``X-GitHub-Api-Version``):
        the version the team reviewed, its default, else a setting when it is required."""
        unsendable = header_text(name, _literal(entry["default"])) if "default" in entry \
            else None
        if unsendable is not None:
            self._drop(required, unsendable)
        elif "default" in entry:
            self.credentials.headers.setdefault(name, _literal(entry["default"]))
            self.notes.append(f"header {name!r} sent as {entry['default']!r} (its default)")
        elif required:
            setting = Setting(setting_name(self.api, name), f"the value of header {name!r}")
            self.credentials.headers.setdefault(name, setting_placeholder(setting.name))
            self.credentials.need(setting)
        else:
            self.notes.append(f"optional header {name!r} left out: the API version is the "
                              "server's default")

    def _drop(self, required: bool, what: str) -> None:
        if required:
            raise Unexpressible(f"required {what} cannot be expressed")
        self.notes.append(f"optional {what} left out: SPEC §10 cannot express it")

    def request_body(self, operation: Target, method: str) -> str | None:
        """Body and files of the operation; the Content-Type header to configure (None:
        capc's default, or no body). See :mod:`body_media` for the media type chosen."""
        if "requestBody" not in operation.value:
            return None
        body = self.refs.follow(Target(operation.file, (*operation.path, "requestBody"),
                                       operation.value["requestBody"]))
        required = body.value.get("required") is True if isinstance(body.value, Mapping) \
            else False
        content = body.value.get("content") if isinstance(body.value, Mapping) else None
        if not isinstance(content, Mapping) or not content:
            return None
        by_text = {str(media): spec for media, spec in content.items()}
        media = pick_media(by_text)
        if media is None:
            self._drop(required, f"request body of type {', '.join(by_text)[:200]}")
            return None
        spec = by_text[media.written]
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        at = Target(body.file, (*body.path, "content", media.written, "schema"), schema)
        if isinstance(schema, Mapping) and _admits_nothing(self.refs.follow(at).value):
            return None  # Stripe's GETs and DELETEs: a form body that can only be empty
        if method in ("get", "head"):
            # Servers and proxies may ignore a GET body: an optional one is left out.
            self._drop(required, f"request body on {method.upper()}")
            return None
        entry = self._body_entry(at, media.kind)
        if entry is None:
            self._drop(required, f"{media.written} request body without a schema")
            return None
        if media.kind is BodyKind.ANY and entry["type"] not in ("object", "array"):
            self._drop(required, f"{media.written} request body of type {entry['type']}")
            return None
        if media.kind is not BodyKind.RAW and entry["type"] == "object" \
                and entry.get("properties"):
            self._body_fields(entry, media.kind)
            return media.content_type
        if media.kind in (BodyKind.FORM, BodyKind.MULTIPART) or \
                (media.kind is BodyKind.RAW and entry["type"] != "string"):
            self._drop(required, f"{media.written} request body that is a {entry['type']} "
                                 "without named fields")
            return None
        return self._whole_body(entry, required, media.content_type or JSON_TYPE)

    def _body_entry(self, at: Target, kind: BodyKind) -> dict[str, Any] | None:
        """The body's §10 entry; a JSON body with no schema (or ``{}``) is free-form, a raw
        one a string; None when nothing says what to send."""
        schema = self.refs.follow(at).value if isinstance(at.value, Mapping) else None
        if isinstance(schema, Mapping) and schema:
            return self.walk.entry(at, "body") or {"type": "object"}
        if kind is BodyKind.RAW:
            return {"type": "string"}
        if kind is BodyKind.JSON:
            self.notes.append("body: a free-form object; its values are taken as strings")
            return {"type": "object", "additional_properties": {"type": "string"}}
        return None

    def _body_fields(self, entry: dict[str, Any], kind: BodyKind) -> None:
        for name, field in entry["properties"].items():
            if not self.arguments.claim(name, "body", field.get("required") is True,
                                        self.notes):
                continue
            if kind is BodyKind.MULTIPART:
                self._multipart_field(name, field)
            else:
                self.arguments.body[name] = field

    def _whole_body(self, entry: dict[str, Any], required: bool, content_type: str) -> str:
        """A body that is one value (an array, a string, a number, a free-form object):
        one argument, the whole ``body_template``, sent as it is (SPEC §10's native leaf)."""
        taken = {name for table in self.arguments.tables.values() for name in table}
        name = next((n for n in _WHOLE_BODY_NAMES if n not in taken), None)
        if name is None:
            raise Unexpressible("the request body's argument names are all taken")
        entry = {**entry, "required": required}
        entry.setdefault("description", "The request body")
        self.arguments.tables[TEMPLATE.key][name] = entry
        self.body_template = "{" + name + "}"
        return content_type

    def _multipart_field(self, name: str, field: dict[str, Any]) -> None:
        required = field.get("required", False) is True
        items = field.get("items", {})
        if field.get(BINARY_MARK) or items.get(BINARY_MARK):
            self.arguments.files[name] = {
                "description": field.get("description", f"the {name} file"),
                "required": required, "multiple": field["type"] == "array"}
        elif field["type"] in SCALARS:
            self.arguments.body[name] = field
        else:
            self._drop(required, f"multipart field {name!r} of type {field['type']}")


def _literal(value: Any) -> str:
    """A document's constant as text: booleans as JSON writes them."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _admits_nothing(schema: Any) -> bool:
    """An object schema whose only valid value is ``{}`` (no properties, no others)."""
    return isinstance(schema, Mapping) and schema.get("additionalProperties") is False \
        and not schema.get("properties") and not schema.get("patternProperties") \
        and not any(key in schema for key in ("allOf", "anyOf", "oneOf", "$ref"))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
