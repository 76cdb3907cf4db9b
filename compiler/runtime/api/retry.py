"""Retrying an api call within its timeout: which failures, how long to wait, and when not.

The whole call, waits included, fits in the tool's ``timeout``: a wait that would not
leave time for another attempt (a ``Retry-After`` beyond the budget) is not waited out,
the last answer is reported at once. Only idempotent methods are retried, unless the tool
names an idempotency-key header: then every attempt of one call carries the same random
key, so the service can tell a retry from a new request. Each attempt goes through the
egress client like the first (the address is checked again) and the redirects of all
attempts together stay within the egress limit.

Without ``options.retry`` no status is retried; egress alone tries a GET, HEAD or OPTIONS
once more when its connection fails before any response (its default, unchanged).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

from compiler.runtime.egress.call import MAX_REDIRECTS
from compiler.runtime.egress.egress_errors import EgressConnectionError

# RFC 9110 §9.2.2. Retried without a key: sending one of these twice has the effect of once.
from compiler.runtime.manifest.model import IDEMPOTENT_METHODS as IDEMPOTENT_METHODS

_DELAY_SECONDS = re.compile(r"\d{1,10}(\.\d{1,6})?")


class _Response(Protocol):
    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


ResponseT = TypeVar("ResponseT", bound=_Response)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``options.retry`` of an api tool, as the manifest holds it (defaults filled in)."""

    attempts: int
    on_status: frozenset[int]
    on_connect: bool
    backoff: float
    idempotency_key: str | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any] | None) -> RetryPolicy | None:
        """The policy of a manifest ``retry`` block (None when the tool has none)."""
        if raw is None:
            return None
        attempts = int(raw["attempts"])
        if not 1 <= attempts <= 5:
            raise ValueError(f"retry.attempts must be 1 to 5, got {attempts}")
        on_errors = list(raw.get("on_errors") or ())
        key = raw.get("idempotency_key")
        return cls(
            attempts=attempts,
            on_status=frozenset(int(code) for code in on_errors if code != "connect"),
            on_connect="connect" in on_errors,
            backoff=float(raw.get("backoff") or 0.0),
            idempotency_key=None if key is None else str(key),
        )

    def attempts_for(self, method: str) -> int:
        """How many attempts a call with ``method`` may make."""
        if method.upper() in IDEMPOTENT_METHODS or self.idempotency_key is not None:
            return self.attempts
        return 1

    def backoff_before(self, retry: int) -> float:
        """The wait before retry number ``retry`` (1 = the first): exponential, jittered."""
        base: float = self.backoff * 2.0 ** (retry - 1)
        # "Equal jitter": never less than half the base, so waits still grow.
        return base / 2 + random.uniform(0, base / 2)


@dataclass(frozen=True, slots=True)
class RetryOutcome(Generic[ResponseT]):
    """The last response of a call, how many attempts it took, and why retrying stopped."""

    response: ResponseT
    attempts: int
    gave_up: str | None = None


def new_idempotency_key() -> str:
    """A random key for one call (128 bits, hex)."""
    return secrets.token_hex(16)


def retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delay-seconds or HTTP-date), or None.

    A date is measured against the response's own ``Date`` when it has one, so a clock
    difference between the service and this machine does not change the wait.
    """
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    when = _http_date(value)
    if when is None:
        return None
    reference = _http_date(headers.get("date") or "") or now or datetime.now(UTC)
    return max(0.0, (when - reference).total_seconds())


def _http_date(value: str) -> datetime | None:
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def send_with_retries(
    send: Callable[[float, int, Callable[[], None]], Awaitable[ResponseT]],
    policy: RetryPolicy,
    method: str,
    deadline: float,
) -> RetryOutcome[ResponseT]:
    """Call ``send(time_left, redirects_left, on_redirect)`` until it succeeds or must stop.

    ``deadline`` is in the running loop's clock. Raises what the last attempt raised when
    that failure is not retried or no attempt is left.
    """
    loop = asyncio.get_running_loop()
    attempts = policy.attempts_for(method)
    redirects_used = 0

    def on_redirect() -> None:
        nonlocal redirects_used
        redirects_used += 1

    attempt = 0
    while True:
        attempt += 1
        left = MAX_REDIRECTS - redirects_used
        try:
            response = await send(deadline - loop.time(), left, on_redirect)
        except EgressConnectionError:
            if not policy.on_connect or attempt >= attempts:
                raise
            wait = policy.backoff_before(attempt)
            if loop.time() + wait >= deadline:
                raise
        else:
            if response.status_code not in policy.on_status or attempt >= attempts:
                return RetryOutcome(response, attempt)
            asked = retry_after(response.headers)
            wait = policy.backoff_before(attempt) if asked is None else asked
            if loop.time() + wait >= deadline:
                reason = (f"it asked to retry after {asked:g} s" if asked is not None
                          else f"the next retry would start after {wait:.1f} s")
                return RetryOutcome(response, attempt, f"{reason}, beyond the tool's timeout")
        await asyncio.sleep(wait)
