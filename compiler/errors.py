"""One small exception hierarchy; ``compiler.cli`` maps each class to an exit code."""

from __future__ import annotations


class CapcError(Exception):
    """Base of every error capc raises on purpose."""

    exit_code = 2


class UsageError(CapcError):
    """Bad flags or arguments."""


class InputOutputError(CapcError):
    """A file that cannot be read or written."""


class ManifestError(CapcError):
    """A manifest that cannot be read, or fails its digest or version check."""


class SigningKeyError(UsageError):
    """A signing key that cannot be created, read or used (never quoting the key)."""
