"""Figures 10a and 10b: nested parameters (SPEC §10) against what a careful hand would write.

10a: building a tool's argument model from a 3-level, 50-field input schema and validating
one call's arguments (back to the JSON the request carries), against a hand-written
pydantic model of the same shape doing the same (its class statements run, one
``model_validate``, one ``model_dump``). Goal: at most 1.5x.

10b: form-encoding a 1,000-leaf body with brackets (``line_items[0][price]=...``), against
``urllib.parse.urlencode`` of the already-flattened pairs. Goal: at most 2x.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from bench.timing import Figure, median_pair, ratio_figure, timed
from compiler.runtime.api.encoding import form_body
from compiler.runtime.tools.argument_models import build_argument_model

LEAVES_PER_LEVEL = 16  # three levels of 16 scalars and one nested field each: 50 fields
REPEATS = 20  # builds per measurement, so one measurement is well above timer noise
FORM_ITEMS = 200  # x 5 fields: 1,000 leaves
FORM_REPEATS = 50
_KINDS = ("string", "integer", "number", "boolean")
_PYTHON = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


def nested_schema(levels: int = 3) -> dict[str, Any]:
    """A closed object of ``levels`` levels, each with 16 scalars and (but the last) one
    nested object: 3 levels are 50 fields."""
    properties: dict[str, Any] = {f"f{index}": {"type": _KINDS[index % 4],
                                                "description": f"field {index}"}
                                  for index in range(LEAVES_PER_LEVEL)}
    if levels > 1:
        properties["child"] = nested_schema(levels - 1)
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def nested_arguments(levels: int = 3) -> dict[str, Any]:
    """One call's arguments for :func:`nested_schema`."""
    values = {"string": "text", "integer": 7, "number": 2.5, "boolean": True}
    found: dict[str, Any] = {f"f{index}": values[_KINDS[index % 4]]
                             for index in range(LEAVES_PER_LEVEL)}
    if levels > 1:
        found["child"] = nested_arguments(levels - 1)
    return found


def hand_written_source(levels: int = 3) -> str:
    """The pydantic classes a careful hand writes for the same shape (innermost first)."""
    lines = ["from pydantic import BaseModel, ConfigDict, Field", ""]
    for level in range(1, levels + 1):
        lines.append(f"class Level{level}(BaseModel):")
        lines.append("    model_config = ConfigDict(extra='forbid')")
        for index in range(LEAVES_PER_LEVEL):
            kind = _PYTHON[_KINDS[index % 4]]
            lines.append(f"    f{index}: {kind} = Field(description='field {index}')")
        if level > 1:
            lines.append(f"    child: Level{level - 1}")
        lines.append("")
    return "\n".join(lines)


def structured_figures(runs: int) -> list[Figure]:
    """Figures 10a and 10b."""
    return [_model_figure(runs), _form_figure(runs)]


def _model_figure(runs: int) -> Figure:
    schema, arguments = nested_schema(), nested_arguments()
    # dont_inherit: this module's "from __future__ import annotations" would make the
    # hand-written annotations strings, which pydantic must then resolve.
    code = compile(hand_written_source(), "<hand-written>", "exec", dont_inherit=True)

    def capc_side() -> None:
        for _ in range(REPEATS):
            model = build_argument_model("bench_tool", schema)
            validated = model.model.model_validate(arguments)
            model.arguments({name: getattr(validated, name)
                             for name in type(validated).model_fields})

    def hand_side() -> None:
        for _ in range(REPEATS):
            namespace: dict[str, Any] = {}
            exec(code, namespace)
            namespace["Level3"].model_validate(arguments).model_dump()

    capc_side()  # warm imports and pydantic's caches on both sides
    hand_side()
    measured, baseline = median_pair(lambda: timed(capc_side), lambda: timed(hand_side), runs)
    return ratio_figure("10a", "build + validate a 3-level, 50-field tool vs hand-written "
                        "pydantic", measured / REPEATS, baseline / REPEATS, goal_ratio=1.5,
                        reason="argument model generation is slower than class statements")


def form_fields() -> dict[str, Any]:
    """A checkout body of 1,000 leaves: 200 line items of five fields."""
    return {"line_items": [{"price": f"price_{index}", "quantity": index % 9 + 1,
                            "note": f"gift & wrap #{index}", "taxable": index % 2 == 0,
                            "amount": index * 1.25} for index in range(FORM_ITEMS)]}


def flattened_pairs(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The same body as ``(key, text)`` pairs, flattened by hand (urlencode's input)."""
    pairs = []
    for index, item in enumerate(fields["line_items"]):
        for key, value in item.items():
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            pairs.append((f"line_items[{index}][{key}]", text))
    return pairs


def _form_figure(runs: int) -> Figure:
    fields = form_fields()
    pairs = flattened_pairs(fields)

    def capc_side() -> None:
        for _ in range(FORM_REPEATS):
            form_body(fields)

    def baseline_side() -> None:
        for _ in range(FORM_REPEATS):
            urlencode(pairs).encode("ascii")

    capc_side()
    baseline_side()
    measured, baseline = median_pair(lambda: timed(capc_side), lambda: timed(baseline_side),
                                     runs)
    return ratio_figure("10b", "form-encode a 1,000-leaf nested body vs urlencode of "
                        "flattened pairs", measured / FORM_REPEATS, baseline / FORM_REPEATS,
                        goal_ratio=2.0, reason="bracket encoding is slower than urlencode")
