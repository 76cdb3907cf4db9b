"""Codes and tool names a reviewer can read, derived from the document alone.

A code is the operationId in snake_case (or, without one, the method and path), within
``^[a-z][a-z0-9_]{0,63}$``. Two operations of the document that would get the same code,
and codes over 64 characters, get a suffix: the method when that is what tells them apart
(``list_pets_post``), else six hex digits of the sha256 of ``METHOD /path``. Names are
computed over every operation of the document, so they never depend on the document's
order or on which operations an import selected.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from compiler.source.characters import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS

MAX_CODE_LENGTH = 64
_HASH_DIGITS = 6
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# Names Windows reserves for devices, whatever the case or extension (``nul.yaml``).
_WINDOWS_DEVICE = re.compile(r"^(con|prn|aux|nul|com[1-9]|lpt[1-9])$")


@dataclass(frozen=True, slots=True)
class OperationKey:
    """What names one operation: its method and path, and its operationId if any."""

    method: str
    path: str
    operation_id: str | None

    @property
    def label(self) -> str:
        """``GET /pets``: how lists and messages show the operation."""
        return f"{self.method.upper()} {self.path}"


def unsafe_characters(text: str) -> str | None:
    """The first control, bidi or invisible character of ``text``, if any."""
    found = CONTROL_CHARACTERS.search(text) or INVISIBLE_CHARACTERS.search(text)
    return found.group() if found else None


def snake_case(text: str) -> str:
    """``listPetsByOwner`` / ``repos/list-for-org`` / ``Get Pets`` → snake_case words."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    spaced = _CAMEL_BOUNDARY.sub("_", folded)
    return _NOT_WORD.sub("_", spaced.lower()).strip("_")


def base_code(key: OperationKey) -> str:
    """The code before any suffix: the operationId in snake_case, else method and path."""
    words = snake_case(key.operation_id or "") or snake_case(f"{key.method} {key.path}")
    if not words:
        words = key.method.lower()
    if not words[0].isalpha():
        words = f"op_{words}"
    return not_a_device(words)


def not_a_device(name: str) -> str:
    """``name``, or ``name_op`` when Windows reserves it (its file ``con.yaml`` would be
    the console there)."""
    return f"{name}_op" if _WINDOWS_DEVICE.match(name) else name


def _digest(key: OperationKey) -> str:
    return hashlib.sha256(key.label.encode("utf-8")).hexdigest()[:_HASH_DIGITS]


def _fit(stem: str, suffix: str) -> str:
    room = MAX_CODE_LENGTH - len(suffix) - 1
    return f"{stem[:room].rstrip('_')}_{suffix}"


def assign_codes(keys: Iterable[OperationKey]) -> dict[OperationKey, str]:
    """A unique, deterministic code for every operation of the document."""
    keys = sorted(set(keys), key=lambda k: (k.path, k.method, k.operation_id or ""))
    bases = {key: base_code(key) for key in keys}
    counts = Counter(bases.values())
    codes: dict[OperationKey, str] = {}
    for key, base in bases.items():
        if counts[base] == 1 and len(base) <= MAX_CODE_LENGTH:
            codes[key] = base
            continue
        same = [other for other, other_base in bases.items() if other_base == base]
        methods = Counter(other.method for other in same)
        if len(same) > 1 and methods[key.method] == 1:
            codes[key] = _fit(base, key.method.lower())
        else:
            codes[key] = _fit(base, _digest(key))
    # A suffixed code may land on another operation's plain code: suffix it again by hash.
    taken = Counter(codes.values())
    for key, code in sorted(codes.items(), key=lambda item: item[0].label):
        if taken[code] > 1 and code != bases[key]:
            taken[code] -= 1
            codes[key] = _fit(bases[key], _digest(key))
            taken[codes[key]] += 1
    return codes


def is_identifier(name: str) -> bool:
    """Whether a parameter name can be a capc argument name as it is."""
    return bool(_IDENTIFIER.match(name))


# The longest document name kept as a wire name (the capability schema's bound).
MAX_WIRE_NAME = 200


def argument_name(wire: str) -> str:
    """An argument name for a document name that is not one (``$filter``, ``api-version``,
    ``@odata.type``, ``X-Request-Id``): its words in snake_case, within 64 characters (a
    longer one is cut and given the digest suffix tool names get)."""
    name = snake_case(wire) or "value"
    if not name[0].isalpha():
        name = f"p_{name}"
    if len(name) > MAX_CODE_LENGTH:
        name = _fit(name, hashlib.sha256(wire.encode("utf-8")).hexdigest()[:_HASH_DIGITS])
    return name


def wire_name_problem(wire: str) -> str | None:
    """Why a document's name cannot be sent as written, or None."""
    if len(wire) > MAX_WIRE_NAME:
        return f"is over {MAX_WIRE_NAME} characters"
    if unsafe_characters(wire):
        return "holds a control, bidi or invisible character"
    return None


def slot_name(name: str) -> str:
    """A path parameter's name as a URL ``{slot}`` (only capc sees it, so it may change)."""
    return argument_name(name)


def setting_name(*parts: str) -> str:
    """``${SETTING}`` name from words: ``("Stripe API", "bearerAuth")`` → STRIPE_API_BEARER_AUTH."""
    words = "_".join(snake_case(part) for part in parts if snake_case(part))
    name = (words or "api_key").upper()
    return name if name[0].isalpha() else f"API_{name}"


def folder_name(title: str) -> str:
    """A folder for the API's files, from its title: lower-case words joined by ``_``."""
    return not_a_device(snake_case(title)[:MAX_CODE_LENGTH].strip("_") or "openapi")
