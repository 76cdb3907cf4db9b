"""Compile a tree through a sequence of edits, cached and not, and compare the outputs.

The compile cache keeps, per file, only the positions earlier compiles asked for
(compiler/cache/position_answers.py): an edit elsewhere can make a new diagnostic point into an
unchanged, cached file. What a compile prints and writes must not depend on which earlier
compiles filled the cache, so each state of a sequence is compiled with no cache, and in
turn on one cache directory (cold for the first state, then after each edit, then warm),
by a child process of a given code tree (``PYTHONPATH``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.support.capc import run_capc_process

State = Mapping[str, str | bytes | None]  # file name -> content; None removes the file
Outcome = tuple[int, str, str, bytes | None]


def _write_state(source: Path, state: State) -> None:
    for name, content in state.items():
        target = source / name
        if content is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode("utf-8")
        target.write_bytes(content)


def _compile(code: Path, work: Path, options: Sequence[str], cache: Path | None) -> Outcome:
    output = work / "manifest.json"
    output.unlink(missing_ok=True)
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("CAPC_")}
    # Outside the working directory: a key file under it would be ignored (a key for one
    # process only), and every compile would then be cold.
    environment["XDG_CACHE_HOME"] = str(work.parent / f"{work.name}-xdg")
    if cache is None:
        environment["CAPC_NO_CACHE"] = "1"
    else:
        environment["CAPC_CACHE_DIR"] = str(cache)
    done = run_capc_process("compile", "src", "-o", output.name, *options, cwd=work,
                            env=environment, code=code, text=False)
    manifest = output.read_bytes() if output.exists() else None
    return (done.returncode, done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"), manifest)


def outcomes(code: Path, work: Path, states: Sequence[State], options: Sequence[str] = (),
             ) -> dict[str, list[Outcome]]:
    """Each state's outcome with no cache, and on one cache along the sequence (then the
    last state once more, warm)."""
    found: dict[str, list[Outcome]] = {"none": [], "cached": []}
    for mode in ("none", "cached"):
        tree = work / mode
        (tree / "src").mkdir(parents=True)
        cache = None if mode == "none" else tree / "cache"
        for state in states:
            _write_state(tree / "src", state)
            found[mode].append(_compile(code, tree, options, cache))
        if cache is not None:
            found[mode].append(_compile(code, tree, options, cache))
    return found


def differences(code: Path, work: Path, states: Sequence[State],
                options: Sequence[str] = ()) -> list[str]:
    """Where a cached compile's outcome differs from the uncached one of the same state."""
    found = outcomes(code, work, states, options)
    expected = [*found["none"], found["none"][-1]]
    return [f"state {number}: cached {got!r} != uncached {want!r}"
            for number, (got, want) in enumerate(zip(found["cached"], expected, strict=True))
            if got != want]
