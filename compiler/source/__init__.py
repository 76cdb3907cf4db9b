"""Sources: find files (``discovery``), render templates (``templates``), strict-load YAML
with positions (``yaml_loader``, ``documents``).

Nothing is imported here: a cache hit needs only discovery, and importing the YAML loader
costs more than the whole lookup.
"""
