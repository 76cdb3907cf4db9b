"""The runtime loader's exceptions: one small hierarchy, separate from the compile side's.

``compiler.runtime`` is a leaf and cannot import ``compiler.errors``; the agent process
only ever sees these classes.
"""

from __future__ import annotations


class RuntimeLoaderError(Exception):
    """Base of every error the runtime loader raises on purpose."""


class ManifestError(RuntimeLoaderError):
    """A manifest that cannot be read, or fails a check; the message names the check."""

    def __init__(self, path: str, check: str, detail: str) -> None:
        self.path = path
        self.check = check
        self.detail = detail
        super().__init__(f"{path}: manifest refused ({check}): {detail}")


class UnresolvedPlaceholderError(RuntimeLoaderError):
    """A ``${NAME}`` setting has no value for this context."""

    def __init__(self, names: list[str]) -> None:
        self.names = sorted(set(names))
        listed = ", ".join("${" + name + "}" for name in self.names)
        super().__init__(f"unresolved setting placeholder(s) {listed}")


class UnsafeSettingError(RuntimeLoaderError):
    """A resolved setting would corrupt a request (a header value with CR, LF or NUL)."""


class ToolCallRefused(RuntimeLoaderError):
    """A tool call refused before any request is sent; the message is for the model."""


class CapabilityUnavailable(RuntimeLoaderError):
    """A capability that cannot be offered in this context; the message says why."""
