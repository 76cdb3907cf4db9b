"""Make the repository's ``bench`` package importable (it is not installed with capc).

If ``pythonpath = ["."]`` is added to [tool.pytest.ini_options], this file can go.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = str(Path(__file__).resolve().parents[2])
if REPOSITORY not in sys.path:
    sys.path.insert(0, REPOSITORY)
