"""The floor for ``capc compile``: find and parse every YAML file with libyaml, nothing else.

Run as ``python -m bench.floor_parse ROOT``; prints the number of documents parsed.
"""

from __future__ import annotations

import os
import sys

import yaml


def parse_tree(root: str) -> int:
    """Parse every ``*.yaml`` document under ``root`` with CSafeLoader; the document count."""
    count = 0
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(folder, name), "rb") as stream:
                    count += sum(1 for _ in yaml.load_all(stream.read(), Loader=yaml.CSafeLoader))
    return count


if __name__ == "__main__":
    print(parse_tree(sys.argv[1]))
