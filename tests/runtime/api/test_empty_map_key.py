"""An empty key of an open map is never sent as ``key[]=`` (issue 30, item 5): Rack, PHP,
qs and Stripe read that as an array push. The call is refused, naming why."""

from __future__ import annotations

import pytest

from compiler.runtime.api.encoding import bracket_pairs, form_body
from compiler.runtime.errors import ToolCallRefused


@pytest.mark.parametrize("value", [{"": "x"}, {"a": {"": "x"}}, [{"": 1}]])
def test_an_empty_map_key_is_refused_never_sent_as_an_array_push(value: object) -> None:
    with pytest.raises(ToolCallRefused, match="empty key"):
        bracket_pairs("metadata", value)
    with pytest.raises(ToolCallRefused, match="empty key"):
        form_body({"metadata": value})


def test_named_keys_are_still_sent_in_brackets() -> None:
    assert bracket_pairs("metadata", {"plan": "pro"}) == [("metadata[plan]", "pro")]
