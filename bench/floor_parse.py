"""The floor for ``capc compile``: find and parse every YAML file with libyaml, nothing else.

Run as ``python -m bench.floor_parse ROOT``; prints the number of documents parsed. With
``--cpu`` it also prints the CPU seconds of the parse alone (no interpreter start, no
``import yaml``): the strictest reading of "the time CSafeLoader takes just to parse".
"""

from __future__ import annotations

import os
import sys
import time

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
    started = time.process_time()
    documents = parse_tree(sys.argv[1])
    spent = time.process_time() - started
    print(f"{documents} {spent:.6f}" if "--cpu" in sys.argv[2:] else documents)
