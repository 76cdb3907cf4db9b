"""Fixtures: the two loopback servers of tests.support.loopback_fixtures."""

from tests.support.loopback_fixtures import _servers, gzip_bomb, other_server, server

__all__ = ["_servers", "gzip_bomb", "other_server", "server"]
