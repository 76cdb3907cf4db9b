"""Structured tool output (SPEC §16): the shaped reply as a value, checked against its schema.

A tool with an output schema returns ``(text, value)``: the text the model reads (exactly
what :func:`compiler.runtime.api.shaping.shape_response` gives) and the structured value,
masked for secrets like the text, when the value matches the shaped schema. LangChain
carries the pair as a ToolMessage's content and artifact
(``response_format="content_and_artifact"``); ``capc serve`` sends them as the text and
``structuredContent`` of an MCP result. The value is None, and the text says why in a
note, whenever the structured value could break the schema: a reply that is not JSON, a
reply cut by ``max_chars`` or by the byte cap, a value that does not match. A mismatch is
logged once per tool and counted, never raised.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.runtime.api.output_validation import (
    UNSUPPORTED_KEYWORDS,
    Validation,
    pattern_cost,
    schema_shape_problem,
    validate_output,
)
from compiler.runtime.manifest.fields import thaw

logger = logging.getLogger(__name__)

NOT_JSON_NOTE = "[no structured output: the response is not JSON]"
CUT_NOTE = ("[no structured output: the response was cut, so it is returned as text only; "
            "ask for less to get the whole value]")


@dataclass(frozen=True, slots=True)
class StructuredReply:
    """What a tool with an output schema returns: ``text``, and ``value`` when it matched."""

    text: str
    value: Any = None
    structured: bool = False

    def as_content_and_artifact(self) -> tuple[str, Any]:
        """``(content, artifact)`` for a LangChain tool (artifact None: text only)."""
        return self.text, (self.value if self.structured else None)


class OutputCounters:
    """How many replies of one tool were structured, and how many did not match.

    Shared by every tool made from one blueprint; the first mismatch is logged, later
    ones only counted (a server that changed its format would flood the log otherwise).
    """

    __slots__ = ("_lock", "matched", "mismatched", "unstructured")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.matched = 0
        self.mismatched = 0
        self.unstructured = 0

    def count(self, outcome: str) -> int:
        """Count one reply (``matched``, ``mismatched`` or ``unstructured``); the new total."""
        with self._lock:
            total: int = getattr(self, outcome) + 1
            setattr(self, outcome, total)
            return total

    def __repr__(self) -> str:
        return (f"OutputCounters(matched={self.matched}, mismatched={self.mismatched}, "
                f"unstructured={self.unstructured})")


@dataclass(frozen=True, slots=True)
class OutputContract:
    """The shaped output schema of one tool, and its counters."""

    tool: str
    schema: Mapping[str, Any]
    counters: OutputCounters = field(default_factory=OutputCounters, compare=False)
    # jsonschema-rs when installed (capc[fast]) and every pattern is a safe one: a reply it
    # accepts needs no second look; one it refuses goes to the validator here, which decides.
    accelerator: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def for_tool(cls, tool: str, schema: Any) -> OutputContract | None:
        """The contract of ``schema`` (None when there is none, or when the runtime cannot
        validate with it: the tool then returns text only, and the reason is logged)."""
        if schema is None:
            return None
        # Bounded first: thawing a 10,000-deep schema would recurse.
        problem = schema_shape_problem(schema)
        plain = thaw(schema) if problem is None else {}
        problem = problem or unusable_schema(plain)
        if problem is not None:
            logger.warning("tool %s: its output schema is not used (%s); it returns text only",
                           tool, problem)
            return None
        return cls(tool, plain, accelerator=_accelerator(plain))

    def exposed_schema(self) -> dict[str, Any]:
        """A fresh copy of the schema, for the tool's metadata (callers may mutate it)."""
        copied: dict[str, Any] = json.loads(json.dumps(self.schema))
        return copied

    def structured(self, text: str, value: Any, size: int,
                   mask: Callable[[str], str] | None) -> StructuredReply:
        """The reply for ``value`` (parsed from about ``size`` characters), masked by
        ``mask``, and ``text`` (already masked); text only, with a note, when it does not match."""
        if mask is not None:
            value = masked_value(value, mask)
        if self.accelerator is not None and self.accelerator.is_valid(value):
            self.counters.count("matched")
            return StructuredReply(text, value, True)
        outcome = validate_output(self.schema, value, size)
        if outcome.valid:
            self.counters.count("matched")
            if outcome.notes:  # a pattern not run (unsafe, or too costly on this string)
                text = f"{text}\n\n[output schema: {'; '.join(outcome.notes)}]"
            return StructuredReply(text, value, True)
        return self.mismatch(text, outcome)

    def mismatch(self, text: str, outcome: Validation) -> StructuredReply:
        """Text only, with a note naming the first difference; logged once per tool."""
        if self.counters.count("mismatched") == 1:
            logger.warning("tool %s: a reply does not match its output schema (%s); it is "
                           "returned as text (logged once per tool, then counted)",
                           self.tool, outcome.problem)
        note = (f"[no structured output: the response does not match the tool's output "
                f"schema ({outcome.problem})]")
        return StructuredReply(f"{text}\n\n{note}")

    def unstructured(self, text: str, note: str) -> StructuredReply:
        """Text only, with ``note`` (not JSON, or cut)."""
        self.counters.count("unstructured")
        return StructuredReply(f"{text}\n\n{note}")


def _accelerator(schema: Mapping[str, Any]) -> Any:
    """A jsonschema-rs validator of ``schema``, or None (not installed, or a pattern the
    bounded validator would not run in full)."""
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, Mapping):
            pattern = node.get("pattern")
            if pattern is not None and (not isinstance(pattern, str)
                                        or pattern_cost(pattern) is None):
                return None
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    try:
        import jsonschema_rs
    except ImportError:
        return None
    try:
        return jsonschema_rs.Draft202012Validator(dict(schema))
    except Exception:  # a schema it reads differently: the bounded validator alone
        return None


def unusable_schema(schema: Any) -> str | None:
    """Why the runtime will not validate with ``schema`` (None: it will)."""
    if not isinstance(schema, Mapping):
        return "it is not an object"
    problem = schema_shape_problem(schema)
    if problem is not None:
        return problem
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, Mapping):
            used = UNSUPPORTED_KEYWORDS.intersection(node)
            if used:
                return f"it uses {sorted(used)[0]!r}, outside the subset capc validates"
            pending.extend(node.values())
        elif isinstance(node, list | tuple):
            pending.extend(node)
    return None


def masked_value(value: Any, mask: Callable[[str], str]) -> Any:
    """``value`` with every string (keys included) masked; iterative, any depth."""
    if isinstance(value, str):
        return mask(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while pending:
        source, parent, slot = pending.pop()
        if isinstance(source, dict):
            copy: Any = {}
            for key, item in source.items():
                masked_key = mask(key)
                copy[masked_key] = None
                pending.append((item, copy, masked_key))
        elif isinstance(source, list):
            copy = [None] * len(source)
            pending.extend((item, copy, index) for index, item in enumerate(source))
        elif isinstance(source, str):
            copy = mask(source)
        else:
            copy = source
        parent[slot] = copy
    return root[0]


def structured_result(contract: OutputContract, result: Any) -> tuple[str, Any]:
    """``(content, artifact)`` of a plugin tool whose override gives an output schema: a
    JSON text or a JSON value from its executor, checked like an api tool's reply."""
    if isinstance(result, str):
        try:
            value = json.loads(result)
        except ValueError:
            return contract.unstructured(result, NOT_JSON_NOTE).as_content_and_artifact()
        text = result
    else:
        value = result
        text = json.dumps(result, ensure_ascii=False, default=str)
    return contract.structured(text, value, len(text), None).as_content_and_artifact()
