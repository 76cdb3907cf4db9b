"""Does a change let an agent reach more? Conservative comparisons for ``capc diff``.

Each function answers for one field whether the new value is *provably* no wider than the
old one; anything it cannot prove (an unknown shape, a filter key it does not model, a
``read_only`` flip in either direction) counts as a widening. A reviewer is better served
by one finding too many than by a widening that slips through ``--fail-on security``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from compiler.runtime.placeholders import SETTING_PATTERN

ALL: frozenset[str] = frozenset({"\0every tool"})
"""Stands for "no name restriction" in a normalised tool filter."""


@dataclass(frozen=True, slots=True)
class ToolFilter:
    """An MCP tool filter: a list of names or ``{tool_names, read_only, ...}``."""

    names: frozenset[str] | None  # None: not limited by name
    read_only: Any  # None when not given
    rest: tuple[tuple[str, str], ...]  # keys capc does not model, compared as text
    known: bool = True  # False: a shape capc cannot read

    @property
    def matches_nothing(self) -> bool:
        """An empty name list with nothing else: the filter selects no tool."""
        return self.names == frozenset() and self.read_only is None and not self.rest


def tool_filter(value: Any) -> ToolFilter | None:
    """The normalised filter (None for an absent value)."""
    if value is None:
        return None
    if isinstance(value, list):
        return ToolFilter(frozenset(map(str, value)), None, ())
    if isinstance(value, Mapping):
        names = value.get("tool_names")
        rest = tuple(sorted((str(k), repr(v)) for k, v in value.items()
                            if k not in ("tool_names", "read_only")))
        listed = frozenset(map(str, names)) if isinstance(names, list) else None
        known = names is None or isinstance(names, list)
        return ToolFilter(listed, value.get("read_only"), rest, known)
    return ToolFilter(None, None, (("value", repr(value)),), known=False)


def filter_within(inner: ToolFilter | None, outer: ToolFilter | None) -> bool:
    """True when every tool ``inner`` selects is provably selected by ``outer``.

    None is "absent": as the inner filter it selects nothing; as the outer, nothing either
    (callers decide what an absent filter means for their field).
    """
    if inner is None or inner.matches_nothing:
        return True
    if outer is None or not (inner.known and outer.known):
        return False
    if inner == outer:
        return True
    if inner.rest != outer.rest or inner.read_only != outer.read_only:
        return False
    if outer.names is None:
        return True
    return inner.names is not None and inner.names <= outer.names


def allowed_tools_widening(old: Any, new: Any) -> str | None:
    """Why ``allowed_tools`` old → new lets the model call more tools, or None."""
    if old == new or old is None:  # absent: every tool already
        return None
    before, after = tool_filter(old), tool_filter(new)
    if after is None:
        return "allowed_tools removed: every tool of the server is now available"
    if filter_within(after, before):
        return None
    assert before is not None
    if after.known and before.known and after.names is not None and before.names is not None \
            and after.read_only == before.read_only and after.rest == before.rest:
        gained = json.dumps(sorted(after.names - before.names), ensure_ascii=False)
        return f"allowed_tools gains {gained}"  # JSON, as every value a diff shows
    return f"allowed_tools widened from {_shown(old)} to {_shown(new)}"


def approval_relaxation(old: Any, new: Any) -> str | None:
    """Why ``require_approval`` old → new asks a human less often, or None.

    ``"always"`` and absent (OpenAI's default) gate every tool, ``"never"`` none; a
    ``{never: FILTER, always: FILTER}`` object exempts what ``never`` selects. The new
    policy is no weaker only if it exempts no tool the old one gated.
    """
    if old == new or _exempt_all(old):
        return None
    if _gates_all(new):
        return None
    if _exempt_all(new):
        return f"require_approval relaxed from {_shown(old)} to {_shown(new)}"
    if not isinstance(new, Mapping) or (old is not None and not isinstance(old, Mapping)
                                        and not _gates_all(old)):
        return f"require_approval changed from {_shown(old)} to {_shown(new)}"
    if _gates_all(old):  # every tool gated before; any exemption (or an unmatched tool) is new
        return f"require_approval relaxed from {_shown(old)} to {_shown(new)}"
    assert isinstance(old, Mapping)
    extra_keys = {k: v for k, v in new.items() if k not in ("never", "always")} != \
        {k: v for k, v in old.items() if k not in ("never", "always")}
    new_never, old_never = tool_filter(new.get("never")), tool_filter(old.get("never"))
    old_always, new_always = tool_filter(old.get("always")), tool_filter(new.get("always"))
    if extra_keys or not filter_within(new_never, old_never) \
            or not filter_within(old_always, new_always):
        exempted = _names(new_never) - _names(old_never)
        ungated = _names(old_always) - _names(new_always)
        if (exempted or ungated) and new_never is not None and new_never.names is not None \
                and (old_never is None or new_never.read_only == old_never.read_only):
            tools = ", ".join(sorted(exempted | ungated))
            return f"require_approval no longer gates tool(s) {tools}"
        return f"require_approval relaxed from {_shown(old)} to {_shown(new)}"
    return None


def _gates_all(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value == "always")


def _exempt_all(value: Any) -> bool:
    return isinstance(value, str) and value == "never"


def _names(selected: ToolFilter | None) -> frozenset[str]:
    return selected.names or frozenset() if selected is not None else frozenset()


def _shown(value: Any) -> str:
    """A manifest value as a reviewer reads it in the diff: JSON, never a Python repr."""
    return "(absent)" if value is None else json.dumps(value, ensure_ascii=False,
                                                       sort_keys=True, default=str)


# Conditions: ``when`` old → new is narrower only when new ⇒ old is provable.


def condition_loosening(old: Any, new: Any) -> str | None:
    """Why ``when`` old → new may hold in more contexts, or None when provably narrower."""
    if old == new or old is None or _implies(new, old):
        return None
    if new is None:
        return f"when removed (was {_shown(old)}): the capability now applies everywhere"
    return f"when loosened (or changed in a way capc cannot prove narrower) from " \
           f"{_shown(old)} to {_shown(new)}"


def _conjuncts(expression: Any) -> list[Any]:
    if isinstance(expression, Mapping) and "all" in expression and len(expression) == 1 \
            and isinstance(expression["all"], list):
        return [part for item in expression["all"] for part in _conjuncts(item)]
    if isinstance(expression, Mapping) and expression and not set(expression) & {"all", "any",
                                                                                   "not"}:
        return [{key: value} for key, value in sorted(expression.items())]
    return [expression]


def _allowed(test: Any) -> frozenset[str] | None:
    if isinstance(test, Mapping):
        values = test.get("in") if set(test) == {"in"} else None
        return frozenset(repr(v) for v in values) if isinstance(values, list) else None
    return frozenset({repr(test)})


def _atom_implies(new: Any, old: Any) -> bool:
    if new == old:
        return True
    single = isinstance(new, Mapping) and isinstance(old, Mapping) and len(new) == len(old) == 1
    if not single or set(new) != set(old) or set(new) & {"all", "any", "not"}:
        return False
    (attribute,) = new
    narrow, wide = _allowed(new[attribute]), _allowed(old[attribute])
    return narrow is not None and wide is not None and narrow <= wide


def _implies(new: Any, old: Any) -> bool:
    """True when ``new`` holding provably means ``old`` holds."""
    if old is None or new == old:
        return True
    if new is None:
        return False
    if isinstance(new, Mapping) and set(new) == {"any"} and isinstance(new["any"], list):
        return all(_implies(branch, old) for branch in new["any"])
    if isinstance(old, Mapping) and set(old) == {"any"} and isinstance(old["any"], list):
        return any(_implies(new, branch) for branch in old["any"])
    new_parts = _conjuncts(new)
    return all(any(_atom_implies(part, wanted) for part in new_parts)
               for wanted in _conjuncts(old))


# Settings: every ``${NAME}`` by where it is used, keys of mappings included.


def setting_uses(section: Any, prefix: str = "") -> set[tuple[str, str]]:
    """``(where, NAME)`` for every ``${NAME}`` in a manifest section, keys included."""
    return {(where, name) for where, text in _texts(section, prefix)
            for name in SETTING_PATTERN.findall(text)}


def _texts(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            yield inner, str(key)
            yield from _texts(item, inner)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item, where)


def new_setting_uses(old: Any, new: Any) -> Iterable[tuple[str, str]]:
    """Settings used in ``new`` at a place ``old`` did not use them, sorted."""
    return sorted(setting_uses(new) - setting_uses(old), key=lambda use: (use[1], use[0]))
