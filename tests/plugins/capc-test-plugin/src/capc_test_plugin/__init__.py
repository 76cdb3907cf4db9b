"""Test plugins for capc's runtime loader (see README.md)."""
