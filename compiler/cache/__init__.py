"""The compile cache: keys, per-file packs, position answers and the store."""
