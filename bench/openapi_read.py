"""Reading an OpenAPI document and locating paths in it, with the one-pass YAML reader and
without (issue 35): CPU seconds of each, interleaved in one process.

    python -m bench.openapi_read DOCUMENT [DOCUMENT ...] [--runs 3] [--paths 2000]

For each document, ``read_document_file`` is run with the one-pass reader of block YAML
(``block_yaml.py``) and with it switched off (every text read the general way: libyaml's
composer and the converter), alternately, ``--runs`` times each; then ``--paths`` paths
spread over the document (values, and a missing key under each tenth) are located in
the document just read (the general way composes the text again on the first). The
collector stays on, as in ``capc import openapi``. It prints
the median CPU seconds of each side and their ratio, and whether the data are the same.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import statistics
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from unittest import mock

from compiler.authoring.openapi.block_yaml import OutsideTheSubset
from compiler.authoring.openapi.document import DocumentFile, read_document_file

Path_ = tuple[str | int, ...]


def _general_only(text: str) -> Any:
    raise OutsideTheSubset("switched off")


def every_path(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """``prefix`` and the path of every value below it, parents first."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from every_path(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from every_path(child, (*prefix, index))


def spread_paths(data: Any, count: int) -> list[Path_]:
    """``count`` paths spread evenly over the document, every tenth with a missing key."""
    every = list(every_path(data))
    step = max(1, len(every) // max(count, 1))
    chosen = every[::step][:count]
    return [(*path, "no such key") if number % 10 == 9 else path
            for number, path in enumerate(chosen)]


def timed_read(path: Path, one_pass: bool, paths: int) -> tuple[float, float, DocumentFile]:
    """CPU seconds of reading ``path`` and of locating ``paths`` paths in it, and the
    document read; the collector on, as the import runs (its passes over the general
    path's node tree are part of that path's cost), after a full collection."""
    switch: AbstractContextManager[object] = contextlib.nullcontext() if one_pass else \
        mock.patch("compiler.authoring.openapi.document.read_block_yaml", _general_only)
    gc.collect()
    with switch:
        started = time.process_time()
        document = read_document_file(path, path.name)
        read = time.process_time() - started
    chosen = spread_paths(document.data, paths)
    started = time.process_time()
    for where in chosen:
        document.locate(where)
    located = time.process_time() - started
    return read, located, document


def main(argv: list[str] | None = None) -> int:
    """Print the read and locate CPU seconds of each document, both ways."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--paths", type=int, default=2000)
    arguments = parser.parse_args(argv)
    print("| document | read, one pass | read, general | ratio | locate, one pass "
          "| locate, general | ratio | one pass taken | same data |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for path in arguments.documents:
        seconds: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        data: dict[bool, str] = {}
        taken = False
        for run in range(arguments.runs):
            for one_pass in ((True, False) if run % 2 == 0 else (False, True)):
                read, located, document = timed_read(path, one_pass, arguments.paths)
                seconds[one_pass].append((read, located))
                if run == 0:
                    data[one_pass] = json.dumps(document.data)
                    taken = taken or (one_pass and document._block is not None)
                del document
        fast = [statistics.median(side) for side in zip(*seconds[True], strict=True)]
        slow = [statistics.median(side) for side in zip(*seconds[False], strict=True)]
        print(f"| {path.name} | {fast[0]:.2f} s | {slow[0]:.2f} s | "
              f"{slow[0] / max(fast[0], 1e-9):.1f}x | {fast[1]:.2f} s | {slow[1]:.2f} s | "
              f"{slow[1] / max(fast[1], 1e-9):.1f}x | {'yes' if taken else 'no'} | "
              f"{'yes' if data[True] == data[False] else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
