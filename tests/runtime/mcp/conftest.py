"""Fixtures of the MCP runtime tests: ``pinned`` (a locked, compiled tree on a real server)."""

from tests.support.pinning import pinned

__all__ = ["pinned"]
