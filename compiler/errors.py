"""One small exception hierarchy; each class carries the exit code the CLI gives for it.

``compiler.cli.entry.main`` maps every failure to an exit code in one place by reading
``exit_code`` (click's pattern), so the same failure exits the same way from every command:

- 0 success (warnings allowed);
- 1 problems found: errors in the sources, warnings under ``--strict``, a stale
  ``--check``, a manifest or signature refused by one of its checks;
- 2 usage or I/O error: bad flags or settings, a file that cannot be read or written.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    """capc's exit codes (SPEC §4)."""

    OK = 0
    PROBLEMS = 1
    USAGE = 2


class CapcError(Exception):
    """Base of every error capc raises on purpose."""

    exit_code: ClassVar[int] = ExitCode.USAGE


class UsageError(CapcError):
    """Bad flags, arguments or ``[tool.capc]`` settings."""


class InputOutputError(CapcError):
    """A file that cannot be read or written."""


class ManifestError(CapcError):
    """A manifest (or its signature) refused by a check: JSON, structure, version, digest,
    duplicate code, signature. A manifest that cannot be read at all is an I/O error."""

    exit_code: ClassVar[int] = ExitCode.PROBLEMS


class ProblemsFound(CapcError):
    """Problems were found and already reported (the message, if any, is printed too)."""

    exit_code: ClassVar[int] = ExitCode.PROBLEMS


class SigningKeyError(UsageError):
    """A signing key that cannot be created, read or used (never quoting the key)."""
