"""``python -m compiler`` is ``capc``."""

from __future__ import annotations

from compiler.cli import main

main()
