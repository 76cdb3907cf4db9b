"""The `when:` grammar: equality, in, not, all, any; missing attributes fail closed."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.runtime.conditions import condition_errors, condition_holds
from compiler.runtime.context import RuntimeContext

CANVAS = RuntimeContext(user_id=1, chat_id=3, page_type="canvas", direction="down", beta=True)


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        (None, True),
        ({"page_type": "canvas"}, True),
        ({"page_type": "chat"}, False),
        ({"page_type": {"in": ["chat", "canvas"]}}, True),
        ({"page_type": "canvas", "direction": "up"}, False),
        ({"not": {"page_type": "chat"}}, True),
        ({"all": [{"page_type": "canvas"}, {"chat_id": 3}]}, True),
        ({"all": []}, True),
        ({"any": [{"page_type": "chat"}, {"direction": "down"}]}, True),
        ({"any": []}, False),
        ({"any": [{"missing": 1}, {"page_type": "canvas"}]}, True),
        ({"all": [{"missing": 1}, {"page_type": "chat"}]}, False),
        ({"beta": 1}, False),
        ({"beta": True}, True),
        ({"chat_id": {"in": [1, 2, 3]}}, True),
    ],
)
def test_condition_truth(when: Any, expected: bool) -> None:
    holds, reason = condition_holds(when, CANVAS)
    assert holds is expected
    assert bool(reason) is not expected


@pytest.mark.parametrize("when", [{"missing": "x"}, {"not": {"missing": "x"}},
                                  {"any": [{"missing": 1}, {"page_type": "chat"}]}])
def test_missing_attribute_is_false_even_negated(when: Any) -> None:
    holds, reason = condition_holds(when, CANVAS)
    assert holds is False
    assert "'missing' is not set" in reason


@pytest.mark.parametrize(
    "when",
    [
        "canvas", [], {}, {"all": {"page_type": "canvas"}}, {"not": "x"},
        {"page_type": {"gt": 1}}, {"page_type": {"in": "canvas"}},
        {"all": [], "page_type": "canvas"}, {"page_type": [1, 2]},
    ],
)
def test_invalid_expressions_are_false_and_reported(when: Any) -> None:
    holds, reason = condition_holds(when, CANVAS)
    assert holds is False and reason.startswith("invalid condition")
    assert condition_errors(when)


def test_valid_expressions_have_no_errors() -> None:
    assert condition_errors({"any": [{"page_type": {"in": ["a"]}}, {"not": {"x": 1}}]}) == []


def test_a_false_negation_names_what_held() -> None:
    ctx = RuntimeContext(user_id=1, group_id=2, page_type="canvas", subchat_direction="outbound")
    holds, reason = condition_holds({"not": {"subchat_direction": "outbound"}}, ctx)
    assert not holds and reason == "a negated condition holds: subchat_direction is 'outbound'"
    holds, reason = condition_holds(
        {"not": {"any": [{"page_type": "doc"}, {"page_type": {"in": ["canvas"]}}]}}, ctx)
    assert not holds and reason.endswith("page_type is 'canvas'")
