"""Tool descriptors and the overrides that patch them (shared by compile time and boot).

A descriptor is what the model sees of a tool: name, description, input and output
schema, namespace. An override patches a *copy* of one descriptor; the executor is never
touched. Composition order is the caller's: each override sees the previous result.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from compiler.runtime.manifest.fields import json_copy
from compiler.runtime.records import record

NAMESPACE_SEPARATOR = "__"

PATCH_FIELDS: tuple[str, ...] = (
    "description",
    "description_append",
    "input_schema",
    "input_schema_patch",
    "output_schema",
    "output_schema_patch",
    "namespace",
)
# Not a patch: a declaration that parameters of the patched schema are read by consumers of
# the tool call (a dashboard, a router), not by the executor. They stay in the schema the
# model sees and are dropped before the executor runs, without an unbound-parameter warning.
CONSUMER_ONLY_FIELD = "consumer_only"


def split_namespace(name: str) -> tuple[str | None, str]:
    """Split ``prefix__rest`` into ``("prefix", "rest")``; no separator gives ``(None, name)``."""
    prefix, separator, rest = name.partition(NAMESPACE_SEPARATOR)
    if not separator or not prefix or not rest:
        return None, name
    return prefix, rest


def relabel_namespace(name: str, namespace: str) -> str:
    """The tool name with its namespace replaced (or added) — ``memory__x`` → ``ns__x``."""
    _, rest = split_namespace(name)
    return f"{namespace}{NAMESPACE_SEPARATOR}{rest}"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; returns a new value and never mutates its inputs."""
    if not isinstance(patch, dict):
        return json_copy(patch)
    result: dict[str, Any] = json_copy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


@record(frozen=True, slots=True)
class ToolDescriptor:
    """What the model sees of one tool. ``original_name`` is what overrides target."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    original_name: str = ""
    # Parameters declared read by consumers of the tool call: never passed to the executor.
    consumer_only: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.original_name:
            object.__setattr__(self, "original_name", self.name)

    @property
    def namespace(self) -> str | None:
        """The ``prefix`` of ``prefix__rest``, or None."""
        return split_namespace(self.name)[0]


@record(frozen=True, slots=True)
class ToolOverride:
    """A declarative patch of one tool's descriptor (the Python twin of ``kind: ToolOverride``)."""

    tool: str
    description: str | None = None
    description_append: str | None = None
    input_schema: dict[str, Any] | None = None
    input_schema_patch: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    output_schema_patch: dict[str, Any] | None = None
    namespace: str | None = None
    consumer_only: tuple[str, ...] = ()
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.fields():
            raise ValueError(f"ToolOverride of {self.tool!r} sets no patch field")
        if isinstance(self.consumer_only, str) or not all(
            isinstance(name, str) and name for name in self.consumer_only
        ):
            raise ValueError(f"ToolOverride of {self.tool!r}: consumer_only must be a list of "
                             "parameter names")
        object.__setattr__(self, "consumer_only", tuple(self.consumer_only))

    @classmethod
    def from_patch(cls, tool: str, patch: dict[str, Any], source: str = "") -> ToolOverride:
        """Build from a manifest ``patch`` mapping (unknown keys are refused)."""
        unknown = set(patch) - {*PATCH_FIELDS, CONSUMER_ONLY_FIELD}
        if unknown:
            raise ValueError(f"unknown override fields: {', '.join(sorted(unknown))}")
        return cls(tool=tool, source=source, **patch)

    def fields(self) -> list[str]:
        """The patch fields this override sets, in application order."""
        return [name for name in PATCH_FIELDS if getattr(self, name) is not None]

    def as_patch(self) -> dict[str, Any]:
        """The manifest ``patch`` mapping (with the consumer-only declaration, when made)."""
        patch = {name: json_copy(getattr(self, name)) for name in self.fields()}
        if self.consumer_only:
            patch[CONSUMER_ONLY_FIELD] = list(self.consumer_only)
        return patch


def apply_override(descriptor: ToolDescriptor, override: ToolOverride, *,
                   owned: bool = False) -> ToolDescriptor:
    """Return a patched copy of ``descriptor``; the input descriptor is left as it was.

    Fields apply in a fixed order: description, then its append, input schema replace
    then merge patch, output schema replace then merge patch, namespace last.
    ``owned``: the descriptor's schemas are the caller's own fresh copies, which nothing
    else holds or changes (``ApiToolEntry.descriptor`` makes them), so a schema the
    override leaves alone is shared with the result instead of copied again.
    """
    description = descriptor.description
    if override.description is not None:
        description = override.description
    if override.description_append is not None:
        description = description + override.description_append
    # Each schema is copied once: by the merge patch when there is one (it never mutates
    # its target), else here. A replaced schema is never copied only to be dropped.
    input_schema = (descriptor.input_schema if override.input_schema is None
                    else override.input_schema)
    if override.input_schema_patch is not None:
        input_schema = merge_patch(input_schema, override.input_schema_patch)
    elif not owned or override.input_schema is not None:
        input_schema = json_copy(input_schema)
    output_schema = (descriptor.output_schema if override.output_schema is None
                     else override.output_schema)
    if override.output_schema_patch is not None:
        output_schema = merge_patch(output_schema or {}, override.output_schema_patch)
    elif not owned or override.output_schema is not None:
        output_schema = json_copy(output_schema)
    name = descriptor.name
    if override.namespace is not None:
        name = relabel_namespace(name, override.namespace)
    # Built directly, not with dataclasses.replace (the same fields, without its
    # introspection): the compiler applies every override of a tree through here.
    return ToolDescriptor(name, description, input_schema, output_schema,
                          descriptor.original_name,
                          descriptor.consumer_only | frozenset(override.consumer_only))
