"""Test plugins for capc (release 0.2.0; see README.md)."""
