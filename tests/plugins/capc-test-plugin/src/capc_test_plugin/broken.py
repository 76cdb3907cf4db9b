"""A plugin whose import fails (a missing dependency, as happens in real deployments)."""

import capc_test_plugin_missing_dependency  # noqa: F401


def register(registry_fn):
    registry_fn("broken", [])
