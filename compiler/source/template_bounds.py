"""Bounds on what rendering a ``*.yaml.j2`` template may cost: steps, sizes, numbers.

Jinja2's sandbox stops escapes (``__class__``, ``mro``), not bombs. A pull request's
template may loop a billion times printing nothing, or grow a string, a list or an
integer by doubling it through ``namespace``. Every bound here is checked *before* the
work is done, and is deterministic (a count, never a clock), so the same template gives
the same answer on every machine:

- **steps**: every loop iteration, call, filter and operator costs one step; a render
  gets :data:`MAX_TEMPLATE_STEPS`. Loops are bounded by wrapping each ``for``'s
  iterable (an environment attribute the template cannot name or shadow).
- **sizes**: ``*``, ``+``, ``%``, ``join``, ``replace``, ``format``, padding and
  indentation refuse a result over :data:`MAX_SEQUENCE_RESULT` characters or items.
- **numbers**: integer results over :data:`MAX_INTEGER_BITS` bits (``**``, ``*``,
  ``+``, ``-``, ``//``, ``%``) and integer arguments over :data:`MAX_INTEGER_ARGUMENT`
  to any call or filter (``center(10**9)``, ``indent``, ``wordwrap``) are refused.

Exceeding a bound raises :class:`~jinja2.exceptions.SecurityError`, which the renderer
turns into a located ``template-sandbox`` error at the template line.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_TEMPLATE_STEPS = 1_000_000
MAX_SEQUENCE_RESULT = 1 << 20
MAX_POWER_BITS = 4096
MAX_INTEGER_BITS = 4096
MAX_INTEGER_ARGUMENT = 1 << 20
CHARACTERS_PER_STEP = 64
MACRO_CALL_STEPS = 8
BOUNDED_ITERABLE = "capc_bounded_iterable"

# printf-style widths/precisions and str.format specs with 6+ digits, or taken from an
# argument (``*``, ``{:{w}}``): checked against the bounds instead of trusted.
_PERCENT_WIDTH = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(?:\d{6,}|\*)|%[-+ #0]*\d*\.(?:\d{6,}|\*)")
_FORMAT_WIDTH = re.compile(r"\{[^{}]*:[^{}]*(?:\d{6,}|\{)")


def _too_large(what: str) -> SecurityError:
    return SecurityError(f"the result of {what} would be too large")


def _int_bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_arguments(name: str, args: Iterable[Any], kwargs: Mapping[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) \
                and abs(value) > MAX_INTEGER_ARGUMENT:
            raise SecurityError(f"{name}: the argument {value if _int_bits(value) < 64 else '…'} "
                                f"is larger than {MAX_INTEGER_ARGUMENT}")


def _text_size(value: Any, limit: int = MAX_SEQUENCE_RESULT) -> int:
    """How many characters ``str(value)`` would have, counted without building it (a
    list may hold one big string a million times); stops counting past ``limit``."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return _int_bits(value) // 3 + 2
    if isinstance(value, float):
        return 24
    if isinstance(value, Mapping):
        items: Iterable[Any] = (part for pair in value.items() for part in pair)
    elif isinstance(value, list | tuple | set | frozenset):
        items = value
    else:
        return 64
    total = 2
    for item in items:
        total += _text_size(item, limit - total) + 2
        if total > limit:
            break
    return total


def _check_percent(template: str, values: Any) -> None:
    if _PERCENT_WIDTH.search(template):
        raise SecurityError("a '%' format width or precision that large (or taken from an "
                            "argument) is refused")
    items = values if isinstance(values, tuple) else (
        list(values.values()) if isinstance(values, Mapping) else [values])
    if len(template) + sum(_text_size(item) for item in items) > MAX_SEQUENCE_RESULT:
        raise _too_large("'%'")


def _check_format(template: str, args: Iterable[Any], kwargs: Mapping[str, Any]) -> None:
    if _FORMAT_WIDTH.search(template):
        raise SecurityError("a format width that large (or taken from an argument) is refused")
    size = len(template) + sum(_text_size(v) for v in (*args, *kwargs.values()))
    if size > MAX_SEQUENCE_RESULT:
        raise _too_large("format")


def _bounded_join(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> Any:
        items = list(value)
        size = len(str(d)) * max(len(items) - 1, 0)
        for item in items:
            size += _text_size(item)
            if size > MAX_SEQUENCE_RESULT:
                raise _too_large("join")
        return original(eval_ctx, items, d, attribute)

    return join


def _checked_filter(name: str, original: Callable[..., Any],
                    environment: CapabilityTemplateEnvironment) -> Callable[..., Any]:
    @functools.wraps(original)
    def checked(*args: Any, **kwargs: Any) -> Any:
        environment.step()
        _check_arguments(f"filter {name!r}", args, kwargs)
        for value in (*args, *kwargs.values()):
            if isinstance(value, list | tuple | Mapping | set | frozenset) \
                    and _text_size(value) > MAX_SEQUENCE_RESULT:
                raise _too_large(f"filter {name!r} (its input is too large)")
        if name == "format" and args and isinstance(args[0], str):
            _check_format(args[0], args[1:], kwargs)
            _check_percent(args[0], tuple(args[1:]) or kwargs)
        if name == "replace":
            _check_replace(*args[:3])
        result = original(*args, **kwargs)
        environment.charge(result)
        return result

    return checked


def _check_replace(value: Any = "", old: Any = "", new: Any = "", *_: Any) -> None:
    text, old_text, new_text = str(value), str(old), str(new)
    count = len(text) + 1 if not old_text else text.count(old_text)
    if len(text) + count * len(new_text) > MAX_SEQUENCE_RESULT:
        raise _too_large("replace")


_SIZED_METHODS = {"join", "replace", "format", "format_map"}


class CapabilityTemplateEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with a step budget and bounded sizes and numbers (see the module)."""

    intercepted_binops = frozenset({"*", "**", "+", "-", "%", "//"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.steps = 0
        for name, original in list(self.filters.items()):
            if name == "join":
                original = _bounded_join(original)
            self.filters[name] = _checked_filter(name, original, self)

    def charge(self, value: Any) -> None:
        """Spend steps for a produced string or sequence: one per 64 characters, so all
        the text one render may build is bounded (64 MiB), not only each piece."""
        if isinstance(value, str | list | tuple):
            self.step(1 + _text_size(value) // CHARACTERS_PER_STEP)

    def capc_emit(self, value: Any) -> Any:
        """An output value, charged by its size (every ``{{ }}`` passes through this)."""
        size = _text_size(value)
        if size > MAX_SEQUENCE_RESULT:
            raise _too_large("this output")
        self.step(1 + size // CHARACTERS_PER_STEP)
        return value

    def capc_concat(self, *parts: Any) -> str:
        """``a ~ b ~ c``, refused before joining when the result would be too large."""
        size = 0
        for part in parts:
            size += _text_size(part)
            if size > MAX_SEQUENCE_RESULT:
                raise _too_large("'~'")
        self.step(1 + size // CHARACTERS_PER_STEP)
        return "".join(map(str, parts))

    def step(self, cost: int = 1) -> None:
        """Spend ``cost`` steps of the render's budget."""
        self.steps += cost
        if self.steps > MAX_TEMPLATE_STEPS:
            raise SecurityError(f"the template takes more than {MAX_TEMPLATE_STEPS} steps "
                                "(loop iterations, calls and operations) to render")

    def capc_bounded_iterable(self, iterable: Any) -> Iterator[Any]:
        """``iterable`` costing one step per item (every ``for`` loops over this)."""
        for item in iterable:
            self.step()
            yield item

    def call(__self, __context: Any, __obj: Any, *args: Any,
             **kwargs: Any) -> Any:
        """Every call from the template: a step, bounded arguments, sized string methods."""
        # A macro call runs a whole body: it costs more than one step.
        __self.step(MACRO_CALL_STEPS if isinstance(__obj, Macro) else 1)
        _check_arguments(getattr(__obj, "__name__", "a call"), args, kwargs)
        # The sandbox hands out str.format as a wrapper; the bound method is __wrapped__.
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        name = getattr(__obj, "__name__", "")
        if isinstance(owner, str) and name in _SIZED_METHODS:
            if name == "join" and args:
                items = list(args[0])
                size = len(owner) * max(len(items) - 1, 0) + sum(map(_text_size, items))
                if size > MAX_SEQUENCE_RESULT:
                    raise _too_large("join")
                args = (items, *args[1:])
            elif name == "replace":
                _check_replace(owner, *args[:2])
            else:
                _check_format(owner, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        __self.charge(result)
        return result

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        """Refuse an operation whose result would be huge before computing it."""
        self.step()
        if operator == "*":
            for sequence, count in ((left, right), (right, left)):
                if isinstance(sequence, str | list | tuple) and isinstance(count, int) \
                        and max(len(sequence), _text_size(sequence)) * count \
                        > MAX_SEQUENCE_RESULT:
                    raise _too_large("'*'")
        if operator == "**" and isinstance(left, int) and isinstance(right, int) \
                and right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > MAX_POWER_BITS:
            raise _too_large("'**'")
        if operator == "+" and isinstance(left, str | list | tuple) and hasattr(right, "__len__") \
                and len(left) + len(right) > MAX_SEQUENCE_RESULT:
            raise _too_large("'+'")
        if operator == "%" and isinstance(left, str):
            _check_percent(left, right)
        bits = {"*": _int_bits(left) + _int_bits(right),
                "+": max(_int_bits(left), _int_bits(right)) + 1,
                "-": max(_int_bits(left), _int_bits(right)) + 1}.get(operator, 0)
        if bits > MAX_INTEGER_BITS and isinstance(left, int) and isinstance(right, int):
            raise _too_large(f"'{operator}'")
        result = super().call_binop(context, operator, left, right)
        self.charge(result)
        return result


def _through(method: str, arguments: list[nodes.Expr], lineno: int) -> nodes.Call:
    return nodes.Call(nodes.EnvironmentAttribute(method), arguments, [], None, None,
                      lineno=lineno)


def bound_loops(tree: nodes.Template) -> None:
    """Route what the sandbox does not intercept through the environment's counters:
    every ``for``'s iterable, every ``~`` and every ``{{ }}`` output (macros, captured
    blocks and the page alike). Environment attributes: a template cannot name them."""
    for loop in tree.find_all(nodes.For):
        iterable: Any = loop.iter
        loop.iter = _through(BOUNDED_ITERABLE, [iterable], iterable.lineno)
    for output in tree.find_all(nodes.Output):
        output.nodes = [item if isinstance(item, nodes.TemplateData)
                        else _through("capc_emit", [item], item.lineno)
                        for item in output.nodes]
    _replace_concat(tree)


def _replace_concat(node: nodes.Node) -> None:
    for field in node.fields:
        value = getattr(node, field, None)
        if isinstance(value, nodes.Concat):
            setattr(node, field, _concat_call(value))
        elif isinstance(value, list):
            setattr(node, field, [_concat_call(item) if isinstance(item, nodes.Concat)
                                  else item for item in value])
    for child in node.iter_child_nodes():
        _replace_concat(child)


def _concat_call(concat: nodes.Concat) -> nodes.Call:
    for part in concat.nodes:
        _replace_concat(part)
    return _through("capc_concat", list(concat.nodes), concat.lineno)
