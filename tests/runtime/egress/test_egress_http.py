"""Pure egress rules: origins, header values, and the bounded body decoder."""

from __future__ import annotations

import gzip
import zlib
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.egress.egress_errors import (
    InvalidRequest,
    OriginMismatch,
    ResponseDecodeError,
    ResponseTooLarge,
)
from compiler.runtime.egress.http import (
    Origin,
    check_same_origin,
    field_value_problem,
    origin_of,
    read_capped_body,
    same_origin,
)


@pytest.mark.parametrize(
    ("url", "origin"),
    [("https://API.example.com/v1?q=1", Origin("https", "api.example.com", 443)),
     ("https://api.example.com:443/", Origin("https", "api.example.com", 443)),
     ("http://api.example.com:8080/x", Origin("http", "api.example.com", 8080)),
     ("http://[::1]:9/", Origin("http", "::1", 9)),
     ("https://user:pw@api.example.com/", Origin("https", "api.example.com", 443)),
     ("https://bücher.de/", Origin("https", "xn--bcher-kva.de", 443))],
)
def test_origin_of(url: str, origin: Origin) -> None:
    assert origin_of(url) == origin


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "file:///etc/passwd", "/relative", "https://{tenant}.x.com/",
            "https://api.example.com{path}", "http://[::1/", ""],
)
def test_origin_of_refuses_what_is_not_an_absolute_http_url(url: str) -> None:
    with pytest.raises(InvalidRequest):
        origin_of(url)


@pytest.mark.parametrize(
    ("built", "declared", "same"),
    [("https://api.example.com/v1/abc", "https://api.example.com/v1/{id}", True),
     ("https://api.example.com:443/v1/abc", "https://api.example.com/v1/{id}", True),
     ("http://api.example.com/v1/abc", "https://api.example.com/v1/{id}", False),
     ("https://api.example.com:8443/v1", "https://api.example.com/v1/{id}", False),
     ("https://api.example.com@evil.com/v1", "https://api.example.com/v1/{id}", False),
     ("https://api.example.com.evil.com/", "https://api.example.com/v1/{id}", False)],
)
def test_same_origin(built: str, declared: str, same: bool) -> None:
    assert same_origin(built, declared) is same
    if same:
        check_same_origin(built, declared)
    else:
        with pytest.raises(OriginMismatch):
            check_same_origin(built, declared)


@settings(max_examples=500, deadline=None)
@given(st.text(), st.sampled_from(["https://api.example.com/v1/{slot}/items",
                                    "https://api.example.com:8443/{slot}",
                                    "http://10.0.0.1/x?q={slot}"]))
def test_an_encoded_slot_value_never_changes_the_origin(value: str, template: str) -> None:
    built = template.replace("{slot}", quote(value, safe=""))
    check_same_origin(built, template)


@pytest.mark.parametrize(
    ("value", "problem"),
    [("Bearer abc", None), ("tab\tinside", None), ("latin-1 é", None),
     ("a\r\nX-Injected: 1", "line break"), ("a\nb", "line break"), ("a\rb", "line break"),
     ("nul\x00", "NUL"), ("bell\x07", "control"), ("del\x7f", "control"), ("emoji 🙂", "Latin-1")],
)
def test_field_value_problem(value: str, problem: str | None) -> None:
    found = field_value_problem(value)
    assert (found is None) if problem is None else (found is not None and problem in found)
    if found is not None:
        assert value not in found


async def test_raw_deflate_and_zlib_deflate_both_decode() -> None:
    payload = b"hello " * 1000
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    for body in (zlib.compress(payload), raw.compress(payload) + raw.flush()):
        response = httpx.Response(
            200, headers={"Content-Encoding": "deflate"}, stream=httpx.ByteStream(body)
        )
        assert await read_capped_body(response, len(payload)) == (payload, False)
        truncated = httpx.Response(
            200, headers={"Content-Encoding": "deflate"}, stream=httpx.ByteStream(body[:-4])
        )
        with pytest.raises(ResponseDecodeError):
            await read_capped_body(truncated, len(payload))


async def test_over_the_cap_is_refused_or_truncated_without_inflating_further() -> None:
    payload = b"0123456789" * 100_000
    for truncate in (False, True):
        response = httpx.Response(200, headers={"Content-Encoding": "gzip"},
                                  stream=httpx.ByteStream(gzip.compress(payload)))
        if not truncate:
            with pytest.raises(ResponseTooLarge):
                await read_capped_body(response, 1000)
            continue
        assert await read_capped_body(response, 1000, truncate=True) == (payload[:1000], True)
    plain = httpx.Response(200, headers={"Content-Length": str(len(payload))},
                           stream=httpx.ByteStream(payload))
    assert await read_capped_body(plain, 10, truncate=True) == (payload[:10], True)


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, gzip", "compress"])
async def test_unsupported_encodings_are_refused(encoding: str) -> None:
    response = httpx.Response(
        200, headers={"Content-Encoding": encoding}, stream=httpx.ByteStream(b"abc")
    )
    with pytest.raises(ResponseDecodeError):
        await read_capped_body(response, 100)
