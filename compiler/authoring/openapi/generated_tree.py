"""The files an import makes: held compressed, checked by the compile, then written.

A large document makes hundreds of megabytes of YAML (Microsoft Graph's 11,000 operations,
with their output schemas) and the compile holds about twenty times what it reads. So
each file is kept zlib-compressed until it is checked or written, and the compile that
checks the tree runs over batches of files when that gives exactly one compile's verdict:
when the tree holds nothing but the files the import writes (no other source, no lock
pins, no plugin tools), so no check relates a file of one batch to a file of another.
The generated files' codes and tool names are unique by construction (one file per
code, named by it), the only relation the compile checks between such capabilities.
Otherwise (a project with other files, a re-import beside stale files) the tree is
compiled once, as ``capc compile`` would.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import zlib
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from compiler.authoring.openapi.generate import GeneratedTool
from compiler.authoring.openapi.operations import Operation
from compiler.authoring.openapi.render import render_tool, rendered_data
from compiler.authoring.openapi.security import with_recorded_security
from compiler.authoring.openapi.server_choice import with_recorded_server
from compiler.authoring.openapi.sinks import INTERPOLATED_OPTIONS
from compiler.authoring.openapi.yaml_scalars import ScalarStyles
from compiler.compile_result import CompileOptions, TreeOverlay
from compiler.diagnostics import Diagnostic
from compiler.source.safe_read import MAX_SOURCE_BYTES
from compiler.tree_compile import CompileRequest, compile_tree, covering

# The YAML one compile checks at most when batches give the same verdict (about 20 times
# that in memory while it compiles).
BATCH_BYTES = 16 * 1024 * 1024
_WRITERS = 8  # files written at once: each waits on its fsync, not on the CPU


class HeldFiles(Mapping[str, bytes]):
    """File name → bytes, each held compressed (YAML text compresses about tenfold), with
    the data each was rendered from (marshalled, compressed), which the compile that checks
    them loads instead of parsing them again (compiler/source/written_files.py)."""

    def __init__(self) -> None:
        self._packed: dict[str, bytes] = {}
        self._sizes: dict[str, int] = {}
        self._data: dict[str, bytes] = {}

    def add(self, name: str, raw: bytes, data: Any = None) -> None:
        """Hold ``raw`` as the file ``name``, rendered from ``data`` (None: not said)."""
        self._packed[name] = zlib.compress(raw, 1)
        self._sizes[name] = len(raw)
        if data is not None:
            # A value marshal cannot hold: none kept, and the compile parses the file.
            with contextlib.suppress(ValueError):
                self._data[name] = zlib.compress(marshal.dumps(data), 1)

    def without(self, names: set[str]) -> HeldFiles:
        """These files but ``names`` (the compressed bytes shared, not copied)."""
        kept = HeldFiles()
        kept._packed = {n: raw for n, raw in self._packed.items() if n not in names}
        kept._sizes = {n: size for n, size in self._sizes.items() if n not in names}
        kept._data = {n: data for n, data in self._data.items() if n not in names}
        return kept

    def data(self, name: str) -> Any:
        """The data the file ``name`` was rendered from (None: not held)."""
        packed = self._data.get(name)
        return None if packed is None else marshal.loads(zlib.decompress(packed))

    def size(self, name: str) -> int:
        """The file's length in bytes (uncompressed)."""
        return self._sizes[name]

    def __getitem__(self, name: str) -> bytes:
        return zlib.decompress(self._packed[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)


class FileRenderer:
    """Each tool's file, made as soon as the tool is (its text kept compressed, its data
    let go), and the operations left out because their file would be larger than capc
    reads (Graph's OneNote PATCHes: the rest of the document is still imported)."""

    def __init__(self, out_dir: str, record: str, selectors: tuple[str, ...],
                 recorded: tuple[str | None, tuple[str, ...]]) -> None:
        from compiler.authoring.tree import schema_reference_from

        self.reference = schema_reference_from(Path(out_dir))
        self.record = record
        # Sorted: the same files (and a clean --check) whatever the order of --operations.
        self.selection = sorted(set(selectors))
        self.recorded = recorded  # the --server and --security the header records
        self.files = HeldFiles()
        self.too_large: list[Operation] = []
        self.styles = ScalarStyles()  # the writer's choices per text, for all the files

    def finish(self, tool: GeneratedTool) -> GeneratedTool:
        """Render ``tool``'s file; keep of the tool what the summary reads (its notes,
        settings and the options that name settings)."""
        data: dict[str, Any] = dict(tool.data)
        origin = dict(data["origin"]["openapi"])
        origin["selection"] = list(self.selection)
        data["origin"] = {"openapi": origin}
        rendered = type(tool)(tool.operation, data, tool.notes, tool.settings)
        text = with_recorded_server(with_recorded_security(
            render_tool(rendered, self.reference, self.record, self.styles), self.recorded[1]),
            self.recorded[0])
        raw = text.encode("utf-8")
        if len(raw) > MAX_SOURCE_BYTES:
            self.too_large.append(tool.operation)
        else:
            self.files.add(f"{tool.operation.code}.yaml", raw, rendered_data(rendered))
        options = data.get("options") or {}
        kept = {part: options[part] for part in INTERPOLATED_OPTIONS if part in options}
        return type(tool)(tool.operation, {"options": kept}, tool.notes, tool.settings)


def compile_diagnostics(files: HeldFiles, out_dir: str, tree: CompileRequest,
                        options: CompileOptions, keep: bool = False) -> list[Diagnostic]:
    """The errors and warnings of the project's tree with ``files`` written into ``out_dir``
    (in memory): what the next ``capc compile`` would say (warnings as errors under strict).

    ``keep``: the files are written when there is no error, so what the compile would
    store is then stored in the compile cache for the next ``capc compile`` of the tree
    (compiler/cache/deferred_entries.py); otherwise nothing is stored."""
    from compiler.cache.deferred_entries import DeferredEntries

    if not files:
        return []  # nothing written: the tree stays as it is
    request = covering(tree, out_dir)
    found: list[Diagnostic] = []
    batches = _batches(files, out_dir, request, options)
    deferred = DeferredEntries(batched=len(batches) > 1)
    for batch in batches:
        paths = {name: Path(out_dir, name).as_posix() for name in batch}
        overlay = TreeOverlay.of({paths[name]: files[name] for name in batch}, written={
            paths[name]: data for name in batch if (data := files.data(name)) is not None})
        compiled = compile_tree(request, overlay, options=options, deferred=deferred)
        found += compiled.diagnostics
        del overlay, compiled
    if keep and not any(d.is_error for d in found):
        deferred.store()
    return list(dict.fromkeys(found))


def _batches(files: HeldFiles, out_dir: str, request: CompileRequest,
             options: CompileOptions) -> list[list[str]]:
    """The names of ``files`` in batches of at most :data:`BATCH_BYTES` (one batch unless
    batches are exact: see the module's docstring)."""
    names = sorted(files)
    if sum(files.size(name) for name in names) <= BATCH_BYTES or not _only_these(
            files, out_dir, request, options):
        return [names]
    batches: list[list[str]] = [[]]
    held = 0
    for name in names:
        if batches[-1] and held + files.size(name) > BATCH_BYTES:
            batches.append([])
            held = 0
        batches[-1].append(name)
        held += files.size(name)
    return batches


def _only_these(files: HeldFiles, out_dir: str, request: CompileRequest,
                options: CompileOptions) -> bool:
    """Whether the tree the compile reads would hold ``files`` and nothing else, and the
    compile relates them to nothing else (no lock pins, no plugin tools)."""
    if options.pins or options.plugin_tools or options.plugins_snapshot:
        return False
    from compiler.project import read_project_settings
    from compiler.source.discovery import discover

    roots = [root for root in (request.sources or read_project_settings().roots)
             if os.path.exists(root)]
    ours = {os.path.realpath(Path(out_dir, name)) for name in files}
    try:
        found = discover(roots)
    except OSError:
        return False
    return all(os.path.realpath(source.disk_path) in ours for source in found)


def write_files(files: HeldFiles, out_dir: str) -> list[str]:
    """Write every file (each atomically, a few at a time); the names are codes, so none
    leaves out_dir."""
    from compiler.manifest import new_file_mode, write_atomically

    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    targets = [folder / name for name in sorted(files)
               if "/" not in name and "\\" not in name]  # codes never hold these
    targets = [target for target in targets if target.parent == folder]
    # Once, here: reading the umask sets it for a moment, which a writer thread running
    # meanwhile would see (its file world-writable, and the umask left at 0).
    mode = new_file_mode()
    with ThreadPoolExecutor(max_workers=_WRITERS) as pool:
        for _ in pool.map(lambda target: write_atomically(target, files[target.name],
                                                           mode=mode), targets):
            pass
    return [target.as_posix() for target in targets]
