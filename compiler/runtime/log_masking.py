"""No log record carries a resolved secret, whichever library writes it.

The libraries under egress see secrets because they send them, and some log what they
see: httpcore logs every response header at DEBUG (a redirect ``Location`` with
``?key=...``), h11's exception texts quote header values, the provider SDKs log request
options with MCP headers. capc cannot keep the secrets from them, so it masks records
before any handler sees them:

- every :class:`~compiler.runtime.context.RuntimeContext` registers itself here (weakly:
  a context that is gone masks nothing), and so does each egress request for the values
  of its secret headers, while it runs (:func:`hold_secrets`);
- :class:`SecretMaskingFilter` rewrites a record's message, exception text, stack text and
  string extras with every live source's mask (``[redacted]``);
- :func:`install_log_masking` (run when a context registers and new loggers appeared)
  attaches the filter to every logger, the egress libraries' and capc's first, and wraps
  the log record factory, so the message and exception of records of loggers created
  later are masked when they are made. Propagation cannot skip it: masking happens to
  the record itself, before the first handler.

Logging is process-global, so this module holds the one process-wide registry; it keeps
weak references and a lock, nothing else.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from compiler.runtime.placeholders import MIN_SECRET_LENGTH, REDACTED, Redactor

# Loggers on the egress path (and the SDKs that receive MCP entries), and capc's own.
MASKED_LOGGERS = (
    "compiler", "httpx", "httpcore", "httpcore.connection", "httpcore.http11",
    "httpcore.http2", "httpcore.proxy", "httpcore.socks", "h11", "h2", "hpack", "anyio",
    "asyncio", "ssl", "mcp", "httpx_sse", "langchain", "langchain_core",
    "langchain_mcp_adapters", "langgraph", "openai", "anthropic",
)
# Set on a record whose message and exception are masked (the factory ran, then a filter).
_MASKED = "_capc_secrets_masked"
# Attributes every LogRecord has; any other string attribute came in through ``extra=``.
_STANDARD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", _MASKED,
}


class SecretSource(Protocol):
    """Something that knows secrets and can mask them in a text."""

    def mask_secrets(self, text: str) -> str:
        """``text`` with every secret this source knows replaced by ``[redacted]``."""
        ...


def log_spellings(value: str) -> set[str]:
    """How ``value`` appears in a log line besides itself: Python's str and bytes reprs.

    httpcore logs header lists as ``[(b'Location', b'...')]``: a backslash or a non-ASCII
    character of the value is escaped there, so the plain value would not match.
    """
    if len(value) < MIN_SECRET_LENGTH:
        return set()
    spellings = {
        repr(value)[1:-1],
        repr(value.encode("utf-8"))[2:-1],
        value.encode("unicode_escape").decode("ascii"),
    }
    with contextlib.suppress(UnicodeEncodeError):
        spellings.add(repr(value.encode("latin-1"))[2:-1])  # how HTTP header bytes show
    return {spelling for spelling in spellings
            if spelling != value and len(spelling) >= MIN_SECRET_LENGTH}


class _LiveSecrets:
    """The sources whose secrets log records must not carry: live contexts, requests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: weakref.WeakSet[Any] = weakref.WeakSet()
        self._loggers_seen = -1

    def register(self, source: SecretSource) -> None:
        """Mask ``source``'s secrets in every record from now on, as long as it lives."""
        with self._lock:
            self._sources.add(source)
            # Libraries create their loggers when imported: attach the filter to any
            # logger that appeared since the last registration (a cheap length check).
            count = len(logging.Logger.manager.loggerDict)
            rescan, self._loggers_seen = count != self._loggers_seen, count
        if rescan:
            install_log_masking()

    def sources(self) -> list[SecretSource]:
        """A snapshot of the live sources."""
        with self._lock:
            return list(self._sources)

    def masker(self) -> Callable[[str], str] | None:
        """A function masking every live source's secrets, or None when there are none."""
        sources = self.sources()
        if not sources:
            return None

        def mask(text: str) -> str:
            for source in sources:
                text = source.mask_secrets(text)
            return text

        return mask


LIVE_SECRETS = _LiveSecrets()


class ValueSecrets:
    """A secret source over plain values (an egress request's secret header values)."""

    def __init__(self, values: Iterable[str]) -> None:
        self._redactor = Redactor()
        self._extra: tuple[str, ...] = ()
        extra: set[str] = set()
        for value in values:
            self._redactor.add(value)
            extra |= log_spellings(value)
        self._extra = tuple(sorted(extra, key=len, reverse=True))

    def mask_secrets(self, text: str) -> str:
        """``text`` with the values (and their usual and log spellings) masked."""
        text = self._redactor.redact(text)
        for spelling in self._extra:
            text = text.replace(spelling, REDACTED)
        return text


def hold_secrets(values: Iterable[str]) -> ValueSecrets | None:
    """Mask ``values`` in every log record for as long as the returned source is referenced.

    The registry holds sources weakly, so a caller keeps the source in a local variable:
    when its frame ends, the values stop being masked. None when no value is long enough.
    """
    wanted = [value for value in values if len(value) >= MIN_SECRET_LENGTH]
    if not wanted:
        return None
    source = ValueSecrets(wanted)
    LIVE_SECRETS.register(source)
    return source


def mask_record(
    record: logging.LogRecord, mask: Callable[[str], str], *, extras: bool = True
) -> None:
    """Rewrite ``record`` in place so that no text it carries holds a secret ``mask`` knows.

    ``extras``: also the string attributes given with ``extra=`` (they are set on the
    record after the record factory ran, so the factory passes False).
    """
    if not getattr(record, _MASKED, False):
        _mask_texts(record, mask)
        setattr(record, _MASKED, True)
    if extras:
        for name, value in list(vars(record).items()):
            if name not in _STANDARD_ATTRIBUTES and isinstance(value, str):
                setattr(record, name, mask(value))


def _mask_texts(record: logging.LogRecord, mask: Callable[[str], str]) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: the handler reports it, we mask the parts
        message = f"{record.msg} {record.args}"
    masked = mask(message)
    if masked != message:
        record.msg, record.args = masked, None
    exception_text = record.exc_text
    if not exception_text and record.exc_info and record.exc_info[1] is not None:
        exception_text = logging.Formatter().formatException(record.exc_info)
    if exception_text:
        masked = mask(exception_text)
        if masked != exception_text:
            # Formatters print exc_text when set; exc_info would let one format it again.
            record.exc_text, record.exc_info = masked, None
    if record.stack_info:
        record.stack_info = mask(record.stack_info)


class SecretMaskingFilter(logging.Filter):
    """A filter that masks (never drops) records: the live secrets become ``[redacted]``."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask ``record`` in place; always keep it."""
        mask = LIVE_SECRETS.masker()
        if mask is not None:
            mask_record(record, mask)
        return True


_FILTER = SecretMaskingFilter()


def install_log_masking(extra_loggers: Iterable[str] = ()) -> None:
    """Attach the masking filter to every logger and wrap the log record factory.

    Idempotent. A logger's filters see only the records made on it, not its children's,
    so the filter goes on each logger that exists (the egress libraries' and capc's are
    made sure of); the record factory masks the message and exception of records of
    loggers created later, until the next registration attaches the filter to them too.
    """
    names = {*MASKED_LOGGERS, *extra_loggers}
    loggers = [logging.getLogger(name) for name in sorted(names)]
    loggers += [logger for logger in list(logging.Logger.manager.loggerDict.values())
                if isinstance(logger, logging.Logger)]
    loggers.append(logging.getLogger())
    for logger in loggers:
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "_capc_masking", False):
        logging.setLogRecordFactory(_masking_factory(factory))


def _masking_factory(inner: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = inner(*args, **kwargs)
        mask = LIVE_SECRETS.masker()
        if mask is not None:
            mask_record(record, mask, extras=False)
        return record

    make_record._capc_masking = True  # type: ignore[attr-defined]
    return make_record
