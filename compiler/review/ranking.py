"""One ranking of changes for ``capc diff`` and ``capc import openapi --check``.

Both commands name each change by a kind and ask :func:`rank_change` how much it matters:
security-relevant (it sends data somewhere new, exposes a setting, or lets the model do
more), contract (a tool's calls change shape: an argument removed, a new path), or other
(descriptions, names). The comparisons both need for the same fields live here too, so a
URL, header or setting change is found and ranked the same way whichever command looks:
:func:`endpoint_changes`, :func:`header_changes`, :func:`setting_changes`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping, Set
from typing import Any, Final
from urllib.parse import urlsplit

from compiler.review.changes import SECURITY_RANKS, ManifestDiff
from compiler.review.widening import new_setting_uses, setting_uses
from compiler.runtime.placeholders import placeholders_in


class Rank(enum.Enum):
    """How much a change matters to a reviewer (most first)."""

    SECURITY = "security-relevant"
    CONTRACT = "contract"
    OTHER = "other"


# Kinds only ``--check`` names (the import compares files, not manifests); every kind in
# SECURITY_RANKS is security-relevant.
_OTHER_RANKS: Final[dict[str, Rank]] = {
    "new-operation": Rank.SECURITY,
    "operation-removed": Rank.CONTRACT,
    "argument-removed": Rank.CONTRACT,
    "argument-changed": Rank.CONTRACT,
    "url-changed": Rank.CONTRACT,
    "headers-changed": Rank.CONTRACT,
    "description-changed": Rank.OTHER,
    # A removed or retyped output field (SPEC §16): listed after every security finding.
    "output-contract-changed": Rank.CONTRACT,
}
CHANGE_RANKS: Final[dict[str, Rank]] = {
    **{kind: Rank.SECURITY for kind in SECURITY_RANKS}, **_OTHER_RANKS}


def rank_change(kind: str) -> Rank:
    """The rank of a change of ``kind``; an unknown kind counts as security-relevant (a
    reviewer is better served by one finding too many)."""
    return CHANGE_RANKS.get(kind, Rank.SECURITY)


def scheme_host(url: Any) -> tuple[str, str] | None:
    """``(scheme, host[:port])`` of a URL, lower-case, without a trailing dot."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    host, colon, port = parts.netloc.rpartition("@")[2].lower().rpartition(":")
    if not colon or not port.isdigit():  # no port (or an IPv6 literal's last group)
        host, colon, port = parts.netloc.rpartition("@")[2].lower(), "", ""
    # DNS names are case-insensitive and "host." is "host": neither is a new host.
    return parts.scheme.lower(), host.rstrip(".") + colon + port


def endpoint_changes(old_url: Any, new_url: Any, known_hosts: Set[str] = frozenset()
                     ) -> Iterator[tuple[str, str]]:
    """``(kind, message)``: plain http where there was none, a host not talked to before
    (``known_hosts``: every host of the old side), or another URL on the same host."""
    after = scheme_host(new_url)
    if after is None:
        return
    before = scheme_host(old_url)
    scheme, host = after
    if scheme == "http" and (before is None or before[0] != "http"):
        was = f" (was {before[0]})" if before else ""
        yield "plain-http", f"sends to {host} over plain http{was}"
    if host not in known_hosts and (before is None or before[1] != host):
        was = f" (was {before[1]})" if before else ""
        yield "new-host", f"talks to a new host {host}{was}"
    elif before is not None and old_url != new_url:
        yield "url-changed", f"url {new_url} (was {old_url})"


def header_changes(old: Any, new: Any) -> Iterator[tuple[str, str]]:
    """``(kind, message)`` per header added, removed or changed; a new header carrying a
    setting, or a setting moved into another header, is a new credential header."""
    before = old if isinstance(old, Mapping) else {}
    after = new if isinstance(new, Mapping) else {}
    for name in sorted(set(before) | set(after), key=str):
        if before.get(name) == after.get(name):
            continue
        gained = set(placeholders_in(after.get(name))) - set(placeholders_in(before.get(name)))
        if name in after and gained:
            yield "new-credential-header", f"header {name} now carries ${{{min(gained)}}}"
        elif name not in after:
            yield "headers-changed", f"header {name} removed"
        else:
            yield "headers-changed", f"header {name} changed"


def setting_changes(before: Any, after: Any) -> Iterator[tuple[str, str]]:
    """``(kind, message)`` for a setting ``after`` needs that ``before`` did not, or one it
    now sends in another place (keys of body templates and headers count too)."""
    known = {name for _, name in setting_uses(before)} if isinstance(before, Mapping) else set()
    reported: set[str] = set()
    for where, name in new_setting_uses(before if isinstance(before, Mapping) else {}, after):
        if name not in known:
            if name not in reported:
                reported.add(name)
                yield "new-placeholder", f"now needs the secret setting ${{{name}}}"
        else:
            yield "new-placeholder", f"now sends the setting ${{{name}}} in {where}"


def worst(kinds: Iterable[str]) -> Rank | None:
    """The most serious rank among ``kinds`` (None for none)."""
    ranks = {rank_change(kind) for kind in kinds}
    return next((rank for rank in Rank if rank in ranks), None)


def diff_rank(diff: ManifestDiff) -> Rank | None:
    """The rank of a whole ``capc diff`` (None: no change): its findings' when it has any,
    else contract unless only descriptions, display names and provenance changed."""
    if diff.security:
        return worst(finding.kind for finding in diff.security)
    if not diff.entries:
        return None
    cosmetic = all(entry.status == "changed" and all(
        field.path == "name" or field.path.startswith("origin.")
        or field.path.rsplit(".", 1)[-1] == "description"
        for field in entry.fields) for entry in diff.entries)
    return Rank.OTHER if cosmetic else Rank.CONTRACT


__all__ = ["CHANGE_RANKS", "Rank", "diff_rank", "endpoint_changes", "header_changes",
           "rank_change", "scheme_host", "setting_changes", "worst"]
