"""Red team, issue 12 items 1-2: a secret in a response never survives a cut or an encoding.

Item 1: a server echoes the key after a model-chosen argument, so the model can place the
key across the 300-character error excerpt or the ``max_response_bytes`` cut; nothing of
the key may remain before the cut. Item 2: the key echoed in another spelling (PHP's
``\\/``, .NET's lowercase percent-encoding, ``\\uXXXX``, HTML references, base64 of
``user:secret``) is masked like the key itself.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.redaction import REDACTED, Redactor, masked_cut
from tests.support.runtime import (
    ReceivedRequest,
    RecordingServer,
    api_capability,
    recording_server,
    write_manifest,
)

KEY = "sk-live/9f8e7d6c+5b4a 3c2d1e0f"
ERROR_EXCERPT = 300


def json_escape(character: str) -> str:
    """``\\uXXXX`` (a surrogate pair outside the BMP), as ensure_ascii encoders write it."""
    code = ord(character)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def spellings(secret: str) -> dict[str, str]:
    """The key as careless servers echo it."""
    every_other = "".join(
        json_escape(c) if index % 2 else c for index, c in enumerate(secret)
    )
    return {
        "raw": secret,
        "json_php_slashes": json.dumps(secret)[1:-1].replace("/", "\\/"),
        "percent_upper": quote(secret, safe=""),
        "percent_lower_dotnet": re.sub(r"%[0-9A-F]{2}", lambda hex_: hex_.group().lower(),
                                       quote(secret, safe="")),
        "form_plus": quote_plus(secret),
        "json_unicode_all": "".join(json_escape(c) for c in secret).upper().replace(
            "\\U", "\\u"),
        "json_unicode_every_other": every_other,
        "html_decimal": "".join(f"&#{ord(c)};" for c in secret),
        "html_hex": "".join(f"&#x{ord(c):x};" for c in secret),
        "html_escape": html.escape(secret).replace("/", "&sol;"),
        "base64": base64.b64encode(secret.encode()).decode(),
        "base64url_unpadded": base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
        **{name: base64.b64encode(user + secret.encode()).decode()
           for name, user in BASIC_USERS.items()},
        "mixed_percent_and_json": quote(secret[:10], safe="") + json.dumps(secret[10:])[1:-1],
    }


BASIC_USERS = {"basic_user": b"user:", "basic_admin": b"admin:", "basic_longname": b"longname:"}


def secret_part(spelling: str, spelled: str) -> str:
    """The part of a spelling that only the key determines (base64 mixes in the user name)."""
    user = BASIC_USERS.get(spelling)
    return spelled if user is None else spelled[-(-8 * len(user) // 6):]


def prefixes_left(text: str, spelled: str) -> list[str]:
    """Every non-empty start of ``spelled`` that ``text`` ends with."""
    return [spelled[:k] for k in range(1, len(spelled)) if text.endswith(spelled[:k])]


@pytest.fixture
def echo_server() -> Iterator[RecordingServer]:
    with recording_server() as server:
        yield server


def manifest_for(tmp_path: Path, url: str, **api: Any) -> Path:
    capability = api_capability(
        "echo", url,
        properties={"q": {"type": "string"}, "spelling": {"type": "string"}},
        arguments={"q": {"bindings": ["query"], "type": "string"},
                   "spelling": {"bindings": ["query"], "type": "string"}},
        required=["q"], headers={"Authorization": "Bearer ${KEY}"}, placeholders=["KEY"],
        **api,
    )
    return write_manifest(tmp_path / "m.json", [capability])


def echo_responder(status: int) -> Callable[[ReceivedRequest], tuple[int, dict[str, str], bytes]]:
    """Reply with the model's ``q`` followed by the key in the asked spelling."""
    from urllib.parse import parse_qs

    def respond(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        query = {k: v[0] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
        key = request.header("Authorization").removeprefix("Bearer ")  # type: ignore[union-attr]
        body = query["q"] + spellings(key)[query.get("spelling", "raw")] + " trailing text"
        return status, {"Content-Type": "text/plain"}, body.encode()

    return respond


async def call(path: Path, arguments: dict[str, Any]) -> str:
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": KEY}))
    async with manifest:
        toolset = await manifest.resolve(manifest.codes(), ctx)
        return str(await toolset.tools[0].ainvoke(arguments))


# --- item 1: mask first, then cut ------------------------------------------------------

@pytest.mark.parametrize("spelling", ["raw", "percent_lower_dotnet", "json_unicode_all", "base64"])
async def test_error_excerpt_never_ends_with_a_start_of_the_key(
    echo_server: RecordingServer, tmp_path: Path, spelling: str
) -> None:
    echo_server.responder = echo_responder(500)
    path = manifest_for(tmp_path, echo_server.base_url + "/e")
    spelled = spellings(KEY)[spelling]
    for shift in range(1, min(len(spelled), 40)):
        # The model pads its argument so the key straddles the excerpt's end.
        text = await call(path, {"q": "x" * (ERROR_EXCERPT - shift), "spelling": spelling})
        excerpt = text.rsplit(": ", 1)[-1]
        assert text.startswith("Error: HTTP 500"), text
        assert not prefixes_left(excerpt, spelled), (shift, excerpt[-20:])
        assert spelled[: len(spelled) - 1] not in text


@pytest.mark.parametrize("spelling", ["raw", "percent_upper", "html_decimal", "basic_user"])
async def test_byte_truncation_never_leaves_a_start_of_the_key(
    echo_server: RecordingServer, tmp_path: Path, spelling: str
) -> None:
    echo_server.responder = echo_responder(200)
    cap = 120
    path = manifest_for(tmp_path, echo_server.base_url + "/t", max_response_bytes=cap)
    spelled = secret_part(spelling, spellings(KEY)[spelling])
    for shift in range(1, min(len(spelled), 40)):
        text = await call(path, {"q": "y" * (cap - shift), "spelling": spelling})
        body, note = text.split("\n\n[truncated", 1)
        assert note, text
        assert not prefixes_left(body, spelled), (shift, body[-20:])


async def test_a_character_split_by_the_byte_cap_does_not_shield_the_key(
    echo_server: RecordingServer, tmp_path: Path
) -> None:
    key = "clé-secrète-ünïcode"

    def respond(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "text/plain; charset=utf-8"}, ("z" * 50 + key).encode()

    echo_server.responder = respond
    for cap in range(51, 50 + len(key.encode())):
        capability = api_capability(
            "echo", echo_server.base_url + "/u?k=${KEY}", properties={"q": {"type": "string"}},
            arguments={"q": {"bindings": ["query"], "type": "string"}}, required=["q"],
            placeholders=["KEY"], max_response_bytes=cap,
        )
        path = write_manifest(tmp_path / "m.json", [capability])
        manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
        ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": key}))
        async with manifest:
            tool = (await manifest.resolve(["echo"], ctx)).tools[0]
            text = str(await tool.ainvoke({"q": "a"}))
        body = text.split("\n\n[truncated", 1)[0]
        assert body.rstrip("\ufffd") == "z" * 50, (cap, body)


async def test_a_status_error_after_a_byte_cut_keeps_no_start_of_the_key(
    echo_server: RecordingServer, tmp_path: Path
) -> None:
    echo_server.responder = echo_responder(502)
    path = manifest_for(tmp_path, echo_server.base_url + "/t", max_response_bytes=64)
    for shift in range(1, 20):
        text = await call(path, {"q": "w" * (64 - shift)})
        assert not prefixes_left(text, KEY), (shift, text[-20:])


def _redactor(secret: str) -> Redactor:
    redactor = Redactor()
    redactor.add(secret)
    return redactor


secrets = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=4, max_size=24
).filter(lambda s: s.strip() == s and len(s.strip()) >= 4)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=secrets, spelling=st.sampled_from(sorted(spellings("abcd"))),
       before=st.text(max_size=30), after=st.text(max_size=30), data=st.data())
def test_no_cut_position_leaves_a_start_of_any_spelling(
    secret: str, spelling: str, before: str, after: str, data: st.DataObject
) -> None:
    whole = spellings(secret)[spelling]
    text = before + whole + after
    spelled = secret_part(spelling, whole)
    redactor = _redactor(secret)
    limit = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    assert len(masked_cut(redactor, text, limit).text) <= limit
    start = len(before) + len(whole) - len(spelled)
    arrived = masked_cut(redactor, text[:limit], arrived_cut=True)
    if start < limit < start + len(spelled):
        # The cut split the secret: nothing of it is shown unmasked (what precedes it may
        # be, even when it looks like the start of a secret: it is not this one).
        shown = arrived.text[start:] if redactor.redact(before) == before else ""
        left = shown.replace(REDACTED, "")
        if spelling.startswith(("base64", "basic")) and shown.startswith(REDACTED):
            # Base64 padding after the masked secret says nothing about it.
            left = left.strip("=")
        assert left == "", prefixes_left(arrived.text, spelled)
    for result in (masked_cut(redactor, text, limit), arrived):
        assert spelled not in result.text
        # A cut only removes: what is kept is the start of the masked text.
        assert redactor.redact(text).startswith(result.text) or result.text.startswith(
            redactor.redact(text[:limit])[: len(result.text)])


def test_a_cut_inside_a_marker_drops_the_whole_marker() -> None:
    redactor = _redactor(KEY)
    text = "abc " + KEY + " def"
    for limit in range(5, 4 + len(REDACTED)):
        assert masked_cut(redactor, text, limit).text == "abc "


# --- item 2: every spelling is masked ----------------------------------------------------

@pytest.mark.parametrize("spelling", sorted(spellings(KEY)))
async def test_an_echoed_spelling_is_masked_in_a_reply(
    echo_server: RecordingServer, tmp_path: Path, spelling: str
) -> None:
    echo_server.responder = echo_responder(200)
    path = manifest_for(tmp_path, echo_server.base_url + "/s")
    text = await call(path, {"q": "<", "spelling": spelling})
    assert text == "<" + REDACTED + " trailing text" or (
        spelling.startswith("basic") and REDACTED in text and KEY not in text), text
    assert spellings(KEY)[spelling] not in text


@pytest.mark.parametrize("spelling", sorted(spellings(KEY)))
async def test_an_echoed_spelling_is_masked_in_an_error(
    echo_server: RecordingServer, tmp_path: Path, spelling: str
) -> None:
    echo_server.responder = echo_responder(400)
    path = manifest_for(tmp_path, echo_server.base_url + "/s")
    text = await call(path, {"q": "<", "spelling": spelling})
    assert text.startswith("Error: HTTP 400") and REDACTED in text, text
    assert spellings(KEY)[spelling] not in text


@pytest.mark.parametrize("user", ["a", "ab", "abc", "user", "admin", "x" * 17])
def test_basic_auth_of_any_user_name_hides_the_secret_bits(user: str) -> None:
    encoded = base64.b64encode(f"{user}:{KEY}".encode()).decode()
    masked = _redactor(KEY).redact(encoded)
    assert REDACTED in masked
    # At most the characters that mix the user name with the key's first bits remain.
    assert len(masked.replace(REDACTED, "")) <= len(base64.b64encode(f"{user}:".encode())) + 1


def test_a_basic_credential_setting_is_masked_decoded_too() -> None:
    token = base64.b64encode(b"alice:correct-horse").decode()
    masked = _redactor(token).redact("user alice:correct-horse, password correct-horse")
    assert "correct-horse" not in masked and "alice:" not in masked


def test_a_character_outside_the_bmp_escaped_as_a_surrogate_pair_is_masked() -> None:
    secret = "key-\U0001f511-value"
    spelled = json.dumps(secret)  # ensure_ascii: "\ud83d\udd11"
    assert _redactor(secret).redact(spelled) == f'"{REDACTED}"'


@pytest.mark.parametrize("short", ["abc", "12", "x"])
def test_values_shorter_than_four_characters_stay_visible_as_documented(short: str) -> None:
    assert _redactor(short).redact(f"id {short} ok") == f"id {short} ok"


def test_masking_twice_changes_nothing() -> None:
    redactor = _redactor("redacted")  # a secret that is part of the marker itself
    once = redactor.redact("a redacted b")
    assert once == f"a {REDACTED} b"
    assert redactor.redact(once) == once
