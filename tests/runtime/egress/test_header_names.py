"""The folding of header names before the forbidden list: the ASCII shortcut of
``normalized_header_name`` gives what the general path (NFKD, marks and format characters
dropped, trimmed, casefolded) gives."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.egress.headers import is_forbidden_request_header, normalized_header_name

pytestmark = pytest.mark.fastpath


def _general(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name)
    visible = "".join(character for character in decomposed
                      if unicodedata.category(character) not in ("Mn", "Cf"))
    return visible.strip().rstrip(":").strip().casefold()


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_ascii_names_fold_as_the_general_path_folds_them(name: str) -> None:
    assert normalized_header_name(name) == _general(name)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20))
def test_any_name_folds_as_the_general_path_folds_it(name: str) -> None:
    assert normalized_header_name(name) == _general(name)


@pytest.mark.parametrize("name", [" Host ", "HOST:", "\tContent-Length", "Proxy-Foo",
                                  "Ｈｏｓｔ", "Ho\u200bst", "Hoſt", "X-Forwarded-Host :"])
def test_every_spelling_of_a_forbidden_name_is_refused(name: str) -> None:
    assert is_forbidden_request_header(name)


@pytest.mark.parametrize("name", ["X-Request-Id", "Accept", "Hosts", "X-Host-Name"])
def test_ordinary_names_pass(name: str) -> None:
    assert not is_forbidden_request_header(name)
