"""Fixtures of the fleet tests: the real MCP server of the pinning tests."""

from tests.support.pinning import pinned

__all__ = ["pinned"]
