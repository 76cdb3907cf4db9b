"""The default settings of a served manifest: the server's environment, by placeholder name.

``${NAME}`` in a manifest reads ``$CAPC_SETTING_NAME``, the spelling ``capc lock`` reads
too. Only names a placeholder of the manifest uses are ever asked for (the loader asks
for nothing else), and nothing else of the environment is reachable through this service.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

SETTING_ENVIRONMENT_PREFIX = "CAPC_SETTING_"
_SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class EnvironmentSettings:
    """Settings from ``$CAPC_SETTING_NAME``: the same for every user of the server."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    async def get_user_setting_value(self, name: str, user_id: Any = None,
                                     group_id: Any = None) -> str | None:
        """The value of ``$CAPC_SETTING_NAME``, or None."""
        if not _SETTING_NAME.fullmatch(name):
            return None
        return self._environ.get(SETTING_ENVIRONMENT_PREFIX + name) or None

    def __repr__(self) -> str:
        # The values are secrets: show where they come from, never what they are.
        return f"EnvironmentSettings(prefix={SETTING_ENVIRONMENT_PREFIX!r})"
