"""A plugin that registers one code and then fails: none of it may be kept."""

from capc_test_plugin.memory import recall


def register(registry_fn, context=None):
    registry_fn("half_registered", [recall], name="Half")
    raise RuntimeError("the plugin's settings are missing")
