"""Issue 19 items 3, 4, 5, 7: a reply cannot choose the work, break Unicode, or multiply.

Every call goes to a real HTTP server on 127.0.0.1 through the real egress client; the
text checked is what the model gets. Complexity tests time n and 8n in a child process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.api import tool_call as api_tool
from compiler.runtime.api.selection import MAX_GROWTH, BoundedSelection, SelectionTooLarge
from compiler.runtime.api.shaping import ResponseShaping, shape_response
from compiler.runtime.egress.charsets import decode_body, valid_unicode
from compiler.runtime.redaction import CutText, Redactor
from tests.support.complexity import assert_linear
from tests.support.runtime import api_capability, write_manifest
from tests.support.scripted_server import Reply, ScriptedServer, scripted_server

KEY = "key-5f4e3d2c1b0a"
MULTIPLY_22 = " | ".join(["[@, @]"] * 22)
THIS = "tests.runtime.api.test_hostile_replies"


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


def reply(body: bytes, content_type: str = "application/json") -> Reply:
    return Reply(200, body, (("Content-Type", content_type),))


async def call(tmp_path: Path, url: str, response: dict[str, Any] | None = None,
               max_response_bytes: int = 1 << 21) -> str:
    entry = api_capability(
        "lookup", url, properties={"q": {"type": "string"}},
        arguments={"q": {"bindings": ["query"], "type": "string"}},
        headers={"X-Key": "${KEY}"}, placeholders=["KEY"], timeout=60.0,
        max_response_bytes=max_response_bytes,
    )
    if response is not None:
        entry["api"]["response"] = {"select": None, "max_items": None, "max_chars": None,
                                    **response}
    manifest = load_manifest(write_manifest(tmp_path / "m.json", [entry]),
                             registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": KEY}))
    async with manifest:
        tool = (await manifest.resolve(["lookup"], ctx)).tools[0]
        return str(await tool.ainvoke({"q": "x"}))


def sendable(text: str) -> None:
    """What the agent's next model request does with a tool output: httpx JSON-encodes it."""
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat", json={"content": text})
    assert request.content


# --- item 3: only allowed text codecs -------------------------------------------------

@pytest.mark.parametrize("charset", ["punycode", "unicode_escape", "raw_unicode_escape",
                                     "utf-7", "idna", "rot13", "zlib", "hex", "nonsense"])
async def test_a_codec_outside_the_allow_list_decodes_as_utf_8(
    scripted: ScriptedServer, tmp_path: Path, charset: str
) -> None:
    body = "caf\u00e9 \\ud800 +2D8A- xn--a-b 78 9c".encode()
    url = scripted.script("/r", reply(body, f"text/plain; charset={charset}"))
    text = await call(tmp_path, url)
    assert text == body.decode("utf-8")
    sendable(text)


@pytest.mark.parametrize(("charset", "text"), [
    ("windows-1252", "\u20ac and caf\u00e9"), ("ISO-8859-15", "\u20ac"),
    ("utf-16", "h\u00e9llo \U0001f600"), ("UTF-32-LE", "\U0001f600"), ("koi8-r", "\u043f\u0440"),
    ("shift_jis", "\u65e5\u672c"), ("latin1", "\u00ff"), ("us-ascii", "plain"),
])
async def test_an_allowed_codec_is_honoured(
    scripted: ScriptedServer, tmp_path: Path, charset: str, text: str
) -> None:
    url = scripted.script("/r", reply(text.encode(charset), f"text/plain; charset={charset}"))
    assert await call(tmp_path, url) == text


def punycode_reply(n: int) -> Callable[[], object]:
    """Workload: decoding a body that names punycode (super-linear if honoured).

    Mostly non-ASCII, so decoding does work per character rather than copy memory (a
    copy's time jumps when the text outgrows the CPU cache, a ratio that is not work).
    """
    body = ("xn--" + "\u20ac\u00e9-9a" * 8).encode() * (n // 40 + 1)
    return lambda: decode_body(body, "text/plain; charset=punycode")


def test_decoding_a_reply_is_linear_whatever_charset_it_names() -> None:
    assert_linear(f"{THIS}:punycode_reply", 1_000_000, time_limit=60)


def test_utf_16_with_lone_surrogates_decodes_to_replacement_characters() -> None:
    body = b"\x00\xd8a\x00\x00\xdcb\x00"  # a lone high and a lone low surrogate
    text = decode_body(body, "text/plain; charset=utf-16-le")
    assert text == "\ufffda\ufffdb"


# --- item 4: tool output is always valid Unicode ---------------------------------------

@pytest.mark.parametrize("response", [
    {"select": "a"}, {"select": "[a, b]"}, {"max_items": 1}, {"select": "a", "max_chars": 2},
    {"select": "to_string(@)"}, {"select": "join(', ', [a, b[0]])"},
])
async def test_a_json_surrogate_escape_never_reaches_the_output(
    scripted: ScriptedServer, tmp_path: Path, response: dict[str, Any]
) -> None:
    body = b'{"a": "x\\ud800y\\udc00", "b": ["\\udbff", "\\ud83d\\ude00"]}'
    url = scripted.script("/r", reply(body))
    text = await call(tmp_path, url, response)
    assert not any("\ud800" <= character <= "\udfff" for character in text), ascii(text)
    sendable(text)


async def test_a_valid_pair_survives_as_its_character(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/r", reply(b'{"a": "\\ud83d\\ude00"}'))
    assert await call(tmp_path, url, {"select": "a"}) == "\U0001f600"


def test_valid_unicode_joins_split_pairs_and_replaces_lone_halves() -> None:
    assert valid_unicode("a\ud83d\ude00b") == "a\U0001f600b"
    assert valid_unicode("\udc00\ud800") == "\ufffd\ufffd"
    assert valid_unicode("plain") == "plain"


# --- item 5: select is bounded in work and result --------------------------------------

async def test_a_multiplying_select_is_refused_at_run_time_with_a_clear_error(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    body = json.dumps({"k": "v" * 96}).encode()
    url = scripted.script("/r", reply(body))
    for select in (MULTIPLY_22, MULTIPLY_22.replace("]", "] | []"), f"to_string({MULTIPLY_22})",
                   f"length(to_string({MULTIPLY_22}))"):
        text = await call(tmp_path, url, {"select": select, "max_chars": 100})
        assert text.startswith("Error: lookup failed: select "), text
        assert "select multiplies this response" in text


def test_a_selection_may_grow_up_to_the_bound() -> None:
    value = {"k": "v" * 1000}
    doubled = BoundedSelection("[@, @] | [@, @]").search(value, 1010)
    assert doubled == [[value, value], [value, value]]
    with pytest.raises(SelectionTooLarge):
        BoundedSelection(" | ".join(["[@, @]"] * 8)).search({"k": "v" * 100_000}, 100_010)
    assert MAX_GROWTH == 8


def multiplying_select(n: int) -> Callable[[], object]:
    """Workload: the 22-fold multiplication over a reply of n characters (refused)."""
    selection = BoundedSelection(MULTIPLY_22.replace("]", "] | []"))
    value = ["v" * 8] * (n // 12)

    def run() -> None:
        try:
            selection.search(value, n)
        except SelectionTooLarge:
            return

    return run


def projecting_select(n: int) -> Callable[[], object]:
    """Workload: an ordinary projection over a reply of n characters."""
    selection = BoundedSelection("results[].{title: title, tags: tags[0:2], n: length(url)}")
    items = [{"title": f"t{i}", "url": "https://a.example/" + "x" * 20, "tags": ["a", "b", "c"]}
             for i in range(n // 80)]
    return lambda: selection.search({"results": items}, n)


@pytest.mark.parametrize(("workload", "n"), [("multiplying_select", 20_000),
                                              ("projecting_select", 100_000)])
def test_select_work_is_linear_in_the_reply(workload: str, n: int) -> None:
    assert_linear(f"{THIS}:{workload}", n, time_limit=90)


def shaped_reply(n: int) -> Callable[[], object]:
    """Workload: mask, select, max_items, max_chars over a reply of about n characters."""
    redactor = Redactor()
    redactor.add(KEY)
    shaping = ResponseShaping.from_manifest(
        {"select": "results[].{t: title, s: snippet}", "max_items": 50, "max_chars": 4000})
    results = [{"title": f"&{i}%", "snippet": "\\u0026" * 8 + KEY[:6]} for i in range(n // 80)]
    body = CutText(json.dumps({"results": results}), False, 0)
    return lambda: shape_response(redactor, body, shaping)


def test_shaping_a_reply_is_linear() -> None:
    assert_linear(f"{THIS}:shaped_reply", 80_000, time_limit=90)


# --- item 7: heavy shaping leaves the event loop ---------------------------------------

@pytest.mark.parametrize("size", [api_tool.SHAPE_ON_THREAD_BYTES // 2,
                                  api_tool.SHAPE_ON_THREAD_BYTES * 16])
async def test_a_large_reply_is_shaped_off_the_event_loop_thread(
    scripted: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    threads: list[str] = []
    real = api_tool.shape_response

    def recording(*arguments: Any) -> str:
        threads.append(threading.current_thread().name)
        return real(*arguments)

    monkeypatch.setattr(api_tool, "shape_response", recording)
    body = json.dumps({"items": ["x" * 100] * (size // 104)}).encode()
    url = scripted.script("/r", reply(body))
    text = await call(tmp_path, url, {"select": "items", "max_items": 2})
    assert json.loads(text.split("\n\n")[0]) == ["x" * 100] * 2
    loop_thread = threading.current_thread().name
    if size > api_tool.SHAPE_ON_THREAD_BYTES:
        assert threads and threads[0].startswith("capc-shaping"), threads
    else:
        assert threads == [loop_thread]


@pytest.mark.parametrize("expression", [
    "results[].{t: title, n: length(tags)}", "results[?score > `0.75`].title",
    "sort_by(results, &score)[].title", "results[?contains(tags, 'a')] | [0]",
    "max_by(results, &score).title", "join('/', results[].title)", "results[*].tags[] | sort(@)",
    "to_string(results[0])", "results[?title == 'Two' || score < `0.75`].url", "*.total",
    "results[0:2].[title, score]", "!results", "results[?!tags]", "keys(@)",
])
def test_a_bounded_selection_selects_what_jmespath_selects(expression: str) -> None:
    import jmespath

    value = {"total": 3, "results": [
        {"title": "One", "url": "https://a.example/1", "score": 0.9, "tags": ["b", "a"]},
        {"title": "Two", "url": "https://a.example/2", "score": 0.8, "tags": []},
        {"title": "Three", "url": "https://a.example/3", "score": 0.7, "tags": ["a"]},
    ]}
    expected = jmespath.search(expression, value)
    assert expected is not None
    assert BoundedSelection(expression).search(value, len(json.dumps(value))) == expected


@pytest.mark.parametrize(("expression", "growth"), [
    ("results[].{title: title, url: url, snippet: snippet, tags: tags, id: id}", 1),
    ("[@, @] | [@, @]", 4), ("{a: @, b: @} | [@, @, @]", 6),
    (" | ".join(["[@, @]"] * 22), 2 ** 22), ("map(&[@, @, @, @, @, @, @, @, @], @)", 10),
    ("results[*].[@, @, @] | [*].[@, @, @]", 9), ("sort_by(results, &score)[].title", 2),
])
def test_the_growth_factor_bounds_what_a_select_can_make(expression: str, growth: int) -> None:
    from compiler.runtime.api.selection import growth_factor

    assert growth_factor(expression) == growth
