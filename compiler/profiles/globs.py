"""Capability globs (``crm_*``, ``get_?``): matched in linear time, never by a regex.

A glob comes from a reviewed file, but a pattern such as ``*a*a*a*a*b`` is exactly what
makes a backtracking matcher exponential; this one is the classic greedy matcher that
remembers only the last star, so a match costs at most len(pattern) x len(code) steps and
usually len(code).
"""

from __future__ import annotations

from collections.abc import Iterable

WILDCARDS = frozenset("*?")


def is_glob(selector: str) -> bool:
    """Whether ``selector`` has a wildcard (else it names one code)."""
    return not WILDCARDS.isdisjoint(selector)


def glob_matches(pattern: str, text: str) -> bool:
    """``*`` any run of characters, ``?`` exactly one; the whole of ``text`` must match."""
    p = t = 0
    star = -1  # the position after the last star seen in the pattern
    resume = 0  # where in the text that star's match would grow from
    while t < len(text):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == text[t]):
            p += 1
            t += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, resume = p + 1, t
            p += 1
        elif star >= 0:
            # Let the last star swallow one more character and retry from there.
            resume += 1
            p, t = star, resume
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def expand(selectors: Iterable[str], codes: Iterable[str]) -> dict[str, list[str]]:
    """``{selector: the codes it matches}``: a plain code itself when known, a glob's
    matches in sorted order; an unknown code or a glob that matches nothing maps to []."""
    known = sorted(set(codes))
    present = set(known)
    expanded: dict[str, list[str]] = {}
    for selector in selectors:
        if selector in expanded:
            continue
        if is_glob(selector):
            expanded[selector] = [code for code in known if glob_matches(selector, code)]
        else:
            expanded[selector] = [selector] if selector in present else []
    return expanded
