"""Issue 19 item 2: masking at a cut is one linear pass and keeps what precedes the secret.

A reply made of a character that can start a spelling of a secret (``&`` starts HTML
references, ``%`` percent-encoding, ``\\`` JSON escapes, the secret's own first character)
once cost a table walk per character per pass, and returned nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compiler.runtime.redaction import REDACTED, Redactor, masked_cut
from tests.support.complexity import assert_linear

SECRET = "s3cr3t-&%\\x0-token"
# Characters that each start some spelling of SECRET's characters.
STARTERS = ("&", "%", "\\", "s", "&#", "%2")


def _redactor() -> Redactor:
    redactor = Redactor()
    redactor.add(SECRET)
    return redactor


def arrived_cut_run(n: int) -> Callable[[], object]:
    """Workload: a body of n starters cut at the byte cap (the worst case once)."""
    redactor, text = _redactor(), "&" * n
    return lambda: masked_cut(redactor, text, arrived_cut=True)


def max_chars_run(n: int) -> Callable[[], object]:
    """Workload: a text of mixed starters cut by max_chars halfway."""
    redactor, text = _redactor(), ("&%\\s" * n)[:n]
    return lambda: masked_cut(redactor, text, n // 2)


@pytest.mark.parametrize("workload", ["arrived_cut_run", "max_chars_run"])
def test_masking_at_a_cut_is_linear(workload: str) -> None:
    assert_linear(f"tests.security.test_cut_masking_linear:{workload}", 100_000, time_limit=90)


@pytest.mark.parametrize("starter", STARTERS)
def test_a_run_of_starters_keeps_everything_before_the_last_spelling_length(
    starter: str
) -> None:
    redactor = _redactor()
    text = starter * 5000
    longest = len(SECRET) * 12  # no character of SECRET has a spelling over 12 characters
    for result in (masked_cut(redactor, text, arrived_cut=True),
                   masked_cut(redactor, text, 4000)):
        assert result.cut
        assert len(result.text) >= min(len(text), 4000) - longest
        assert text.startswith(result.text)


def test_a_secret_split_by_the_cut_is_dropped_and_what_precedes_it_kept() -> None:
    redactor = _redactor()
    before = "&&&% result: "
    for split in range(1, len(SECRET)):
        result = masked_cut(redactor, before + SECRET[:split], arrived_cut=True)
        assert result.text == before, (split, result.text)


def test_a_secret_after_the_cut_is_masked_before_cutting() -> None:
    redactor = _redactor()
    text = "a" * 100 + SECRET + "b" * 100
    result = masked_cut(redactor, text, 105)
    assert result.text == "a" * 100
    assert masked_cut(redactor, text, 200).text == "a" * 100 + REDACTED + "b" * 90
