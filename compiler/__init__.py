"""capc — the capability compiler.

The compile side (this package minus ``compiler.runtime``) turns YAML sources into one
frozen manifest; ``compiler.runtime`` loads that manifest inside an agent process.
"""

from __future__ import annotations

__version__ = "0.1.0"
