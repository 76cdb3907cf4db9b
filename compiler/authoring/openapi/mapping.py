"""One operation → the ``options`` of a capc ``api`` capability (SPEC §10/§11).

Path parameters become ``{slot}``s (renamed to snake_case when needed: only capc reads
the slot's name), query parameters ``params`` with the §10 ``style`` that matches the
document's ``style``/``explode``, request bodies ``body`` (JSON, form-urlencoded) or
``body`` + ``files`` (multipart; :mod:`request_bodies`). What §10 cannot say is left out
with a note when it is optional; when it is required the operation is skipped with the
reason (the tool could not send a request the API accepts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from compiler.authoring.openapi.body_media import FORM as FORM  # the importer's name for it
from compiler.authoring.openapi.document_text import clean_text
from compiler.authoring.openapi.naming import (
    argument_name,
    is_identifier,
    slot_name,
    wire_name_problem,
)
from compiler.authoring.openapi.operation_arguments import (
    Arguments,
    cookie_parameter,
    drop,
    fixed_header,
    fixed_query,
    literal,
)
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.request_bodies import BodyMapper
from compiler.authoring.openapi.schema_scalars import SCALARS
from compiler.authoring.openapi.schemas import Budget, SchemaWalk, Unexpressible
from compiler.authoring.openapi.security import (
    Credentials,
    credential_header,
    is_credential_header,
)
from compiler.authoring.openapi.sinks import header_text
from compiler.runtime.egress.headers import configured_header_problem
from compiler.runtime.manifest.parameters import WIRE_NAME

_SLOT = re.compile(r"\{([^{}]*)\}")
# A query parameter that names the API's version (``api-version``): a reviewed fact, sent as
# its default or a setting the team fills, never a model's choice.
_VERSION_NAME = re.compile(r"(?i)^api[-_.]?version$")
_VERSION_HEADER = re.compile(r"(?i)(?:^|-)version$")
# Headers capc writes from what it sends: a parameter declaring one is left to capc.
_WRITTEN_BY_CAPC = frozenset({"content-type"})
# (OpenAPI style, explode) → §10 style. Exploded pipe- and space-delimited arrays are sent
# as form's (`a=1&a=2`), as OpenAPI says; Swagger 2's tsv has no OpenAPI 3 style.
_ARRAY_STYLES = {("form", True): "repeat", ("form", False): "comma",
                 ("deepObject", True): "brackets", ("deepObject", False): "brackets",
                 ("pipeDelimited", False): "pipe", ("pipeDelimited", True): "repeat",
                 ("spaceDelimited", False): "space", ("spaceDelimited", True): "repeat"}


class OperationMapper:
    """Maps the operations of one document; ``walk.notes`` collects what was bent."""

    def __init__(self, refs: References, budget: Budget, credentials: Credentials,
                 api: str = "api") -> None:
        self.refs = refs
        self.walk = SchemaWalk(refs, budget)
        self.credentials = credentials
        # What the security schemes send: a parameter of the same name is theirs.
        self._secured = ({name.lower() for name in credentials.headers},
                         set(credentials.query))
        self.arguments = Arguments()
        self.api = api  # the title words settings are named after
        self.bodies = BodyMapper(refs, self.walk, self.arguments)
        # Fields of form-exploded query objects, mapped after the parameters.
        self._exploded: list[tuple[str, str, dict[str, Any], bool]] = []

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
        if "/" in fragment or "{" in fragment:
            # More of the path after '#' (Mastercard's "/send/#env/v1/partners/{partnerId}":
            # a placeholder the reader fills in): no URL sends it, and no value is known.
            raise Unexpressible(f"path {(path + hash_mark + fragment)[:120]!r} holds '#' "
                                "before more of its path (a URL sends nothing after '#')")
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
            elif where == "cookie":
                cookie_parameter(self.credentials, api, name, self._schema(param, name),
                                 param.value.get("required") is True, self.notes)
            elif param.value.get("required") is True:
                raise Unexpressible(f"required {where} parameter {name!r}")
            else:
                self.notes.append(f"optional {where} parameter {name!r} left out")
        # A form-exploded object's fields after the parameters: a parameter the document
        # names keeps its name over a field of the same name (AWS's `Version` and
        # `LaunchTemplate.Version`, both sent as `Version`).
        exploded, self._exploded = self._exploded, []
        for object_name, field_name, field, required in exploded:
            self._exploded_field(object_name, field_name, field, required)

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
                    self._exploded.append((name, field_name, field, field_required))
                return
            else:
                return self._drop(required, f"query object {name!r} in style {style!r}")
        elif entry["type"] == "array" and entry.get("style") == "json":
            # A query array as JSON text (its `content`): §10 sends arrays repeated or
            # delimited, objects as JSON; three operations in the APIs.guru directory.
            return self._drop(required, f"query array {name!r} sent as JSON text")
        elif entry["type"] == "array":
            if entry["items"]["type"] not in SCALARS:
                return self._drop(required, f"query array of {entry['items']['type']}s "
                                            f"{name!r}")
            if (style, explode) not in _ARRAY_STYLES:
                return self._drop(required, f"query array {name!r} in style {style!r}")
            entry["style"] = _ARRAY_STYLES[(style, explode)]
        self._add_query(name, entry, required)

    def _exploded_field(self, name: str, field_name: str, field: dict[str, Any],
                        required: bool) -> None:
        """One property of a form-exploded query object (``?value=open``), its own query
        parameter: a scalar, or an array of scalars repeated (``?tag=a&tag=b``). Form has
        no encoding for an object or an array of objects inside it (Telnyx's
        ``filter[status]`` holds ``details``, an array of objects): left out, or the
        operation skipped when it is required."""
        kind = field["type"]
        if kind not in SCALARS and not (kind == "array" and field["items"]["type"] in SCALARS):
            shape = f"array of {field['items']['type']}s" if kind == "array" else kind
            return self._drop(required, f"query field {field_name!r} of {name!r} (an "
                                        f"{shape} inside a form-exploded object)")
        self._add_query(field_name, field, required)

    def _add_query(self, name: str, entry: dict[str, Any], required: bool) -> None:
        wire = entry.pop(WIRE_NAME, name)  # a field of an exploded object may carry one
        if wire in self._secured[1]:
            self.notes.append(f"query parameter {wire[:80]!r} left out: the security "
                              "scheme sends it (a setting)")
            return
        if _VERSION_NAME.match(wire) and entry["type"] in SCALARS and \
                (required or "default" in entry):
            return fixed_query(self.credentials, self.api, wire, entry, self.notes)
        argument = self._argument_name(wire, required, "query parameter")
        if argument is not None:
            argument = self.arguments.place(argument, "query", required, self.notes)
        if argument is None:
            return
        if argument != wire:
            entry = {**entry, WIRE_NAME: wire}
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

    def _header(self, name: str, param: Target, api: str) -> None:
        if is_credential_header(name) and header_text(name, "") is None:
            credential_header(self.credentials, api, name)
            return
        required = param.value.get("required") is True
        if name.lower() in self._secured[0]:
            self.notes.append(f"header parameter {name[:80]!r} left out: the security "
                              "scheme sends it (a setting)")
            return
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
            unsendable = header_text(name, literal(values[0]))
            if unsendable is not None:
                return self._drop(required, unsendable)
            self.credentials.headers.setdefault(name, literal(values[0]))
            self.notes.append(f"header {name!r} sent as {values[0]!r} (its only value)")
            return
        if _VERSION_HEADER.search(name) and entry["type"] in SCALARS:
            return fixed_header(self.credentials, self.api, name, entry, required,
                                self.notes)
        if entry["type"] not in SCALARS:
            return self._drop(required, f"header parameter {name!r} of type {entry['type']}")
        entry.pop("style", None)
        argument = self._argument_name(name, required, "header parameter")
        if argument is not None:
            argument = self.arguments.place(argument, "header", required, self.notes)
        if argument is not None:
            self.arguments.headers[argument] = {**entry, WIRE_NAME: name,
                                                "required": required}

    def _drop(self, required: bool, what: str) -> None:
        drop(self.notes, required, what)

    def request_body(self, operation: Target, method: str) -> str | None:
        """Body and files of the operation; the Content-Type header to configure (None:
        capc's default, or no body): :mod:`request_bodies`."""
        return self.bodies.request_body(operation, method)

    @property
    def body_template(self) -> str | None:
        """``{name}`` when the body is one whole argument (else None)."""
        return self.bodies.body_template

def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
