"""The header rules are written once, in compiler/runtime/egress/headers.py: what breaks a
header (CR, LF, NUL) and what a header name may hold (an RFC 9110 token). The compile-side
check, the OpenAPI import and the runtime call that module; a second spelling of either
rule in compiler/ fails here.
"""

from __future__ import annotations

import ast

from compiler.runtime.egress.headers import breaks_header, header_name_problem
from tests.support.paths import REPO_ROOT

HOME = REPO_ROOT / "compiler/runtime/egress/headers.py"


def spells_a_header_rule(text: str) -> bool:
    """Whether a string constant spells CR+LF+NUL together, or the token's characters."""
    plain = "\r" in text and "\n" in text and "\0" in text
    escaped = "\\r" in text and "\\n" in text and ("\\x00" in text or "\\0" in text)
    return plain or escaped or "|~0-9A-Za-z" in text


def test_the_reader_sees_a_second_spelling() -> None:
    assert spells_a_header_rule(r"[\r\n\x00]") and spells_a_header_rule("\r\n\0")
    assert spells_a_header_rule(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
    assert not spells_a_header_rule(r"\s*[\r\n]+")


def test_no_second_copy_of_the_header_rules() -> None:
    copies = []
    for path in (REPO_ROOT / "compiler").rglob("*.py"):
        if path == HOME:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and spells_a_header_rule(node.value):
                copies.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert not copies, copies


def test_the_one_rule_answers_as_the_rule_says() -> None:
    assert [breaks_header(text) for text in ("a\rb", "a\nb", "a\0b", "a\tb", "plain")] == [
        True, True, True, False, False]
    assert header_name_problem("X-Api-Key") is None
    assert header_name_problem("X-Api-Key\n") is not None
    assert header_name_problem("bad header") is not None
