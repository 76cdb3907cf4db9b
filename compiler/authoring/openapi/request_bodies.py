"""An operation's request body → ``body`` fields, ``files``, or one whole-body argument.

The media type is chosen by :mod:`body_media`. An object with named fields gives one
argument per field (multipart: binary fields become ``files``); a body that is one value
(an array, a string, a number, a free-form object, a raw text) is one argument whose
value is the whole ``body_template`` (SPEC §10's native leaf). A body that can only be
``{}`` is ignored; an optional body on a GET is left out with a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.authoring.openapi.body_media import JSON as JSON_TYPE
from compiler.authoring.openapi.body_media import BodyKind, pick_media
from compiler.authoring.openapi.operation_arguments import Arguments, drop
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.schema_scalars import BINARY_MARK, SCALARS
from compiler.authoring.openapi.schemas import SchemaWalk, Unexpressible
from compiler.runtime.manifest.parameters import TEMPLATE, WIRE_NAME

_WHOLE_BODY_NAMES = ("body", "request_body", "payload")


class BodyMapper:
    """The request body of one operation into its :class:`Arguments`."""

    def __init__(self, refs: References, walk: SchemaWalk, arguments: Arguments) -> None:
        self.refs = refs
        self.walk = walk
        self.arguments = arguments
        self.body_template: str | None = None  # a body that is one whole argument

    @property
    def notes(self) -> list[str]:
        """What could not be kept as the document says it."""
        return self.walk.notes

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
            drop(self.notes, required, f"request body of type {', '.join(by_text)[:200]}")
            return None
        spec = by_text[media.written]
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        at = Target(body.file, (*body.path, "content", media.written, "schema"), schema)
        if isinstance(schema, Mapping) and _admits_nothing(self.refs.follow(at).value):
            return None  # Stripe's GETs and DELETEs: a form body that can only be empty
        if method in ("get", "head"):
            # Servers and proxies may ignore a GET body: an optional one is left out.
            drop(self.notes, required, f"request body on {method.upper()}")
            return None
        entry = self._body_entry(at, media.kind)
        if entry is None:
            drop(self.notes, required, f"{media.written} request body without a schema")
            return None
        if media.kind is BodyKind.ANY and entry["type"] not in ("object", "array"):
            drop(self.notes, required, f"{media.written} request body of type {entry['type']}")
            return None
        if media.kind is not BodyKind.RAW and entry["type"] == "object" \
                and entry.get("properties"):
            self._body_fields(entry, media.kind)
            return media.content_type
        if media.kind in (BodyKind.FORM, BodyKind.MULTIPART) or \
                (media.kind is BodyKind.RAW and entry["type"] != "string"):
            drop(self.notes, required, f"{media.written} request body that is a "
                                       f"{entry['type']} without named fields")
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
            argument = self.arguments.place(name, "body", field.get("required") is True,
                                            self.notes)
            if argument is None:
                continue
            if argument != name:  # sent under the field's own name
                if field.get(BINARY_MARK) or field.get("items", {}).get(BINARY_MARK):
                    raise Unexpressible(f"file field {name!r} shares its name with another "
                                        "parameter (a file part keeps its name)")
                field = {**field, WIRE_NAME: field.get(WIRE_NAME, name)}
            if kind is BodyKind.MULTIPART:
                self._multipart_field(argument, field)
            else:
                self.arguments.body[argument] = field

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
            drop(self.notes, required, f"multipart field {name!r} of type {field['type']}")


def _admits_nothing(schema: Any) -> bool:
    """An object schema whose only valid value is ``{}`` (no properties, no others)."""
    return isinstance(schema, Mapping) and schema.get("additionalProperties") is False \
        and not schema.get("properties") and not schema.get("patternProperties") \
        and not any(key in schema for key in ("allOf", "anyOf", "oneOf", "$ref"))
