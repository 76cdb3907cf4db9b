"""The compile core: located documents in, (manifest, diagnostics) out. No I/O here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from compiler import __version__
from compiler.checks.api import check_api_documents
from compiler.checks.final_names import check_final_tool_names
from compiler.checks.internal import (
    check_internal_codes,
    check_plugin_failures,
    check_plugin_tool_overrides,
    has_catalogue,
)
from compiler.checks.mcp import check_mcp
from compiler.checks.names import check_unique_names
from compiler.checks.partial import checkable_remainder
from compiler.checks.pin_rules import check_pins, pinned_tools
from compiler.checks.scaffold_placeholders import check_scaffold_placeholders
from compiler.checks.when_conditions import check_when
from compiler.compile_result import CompileOptions, CompileResult
from compiler.diagnostics import Diagnostic, has_errors, settle
from compiler.normalize import capability_entry, stored_entry
from compiler.overrides import apply_tree_overrides
from compiler.pins.pinned_overrides import apply_pin_overrides, is_pinned_target
from compiler.plugins import plugin_tool_names, recorded_snapshot
from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks
from compiler.runtime.manifest.fields import freeze
from compiler.runtime.manifest.format import MANIFEST_VERSION
from compiler.runtime.manifest.model import (
    CapabilityEntry,
    ManifestModel,
    PendingOverride,
    manifest_json,
)
from compiler.runtime.manifest.profile_entries import ProfileEntry
from compiler.runtime.records import record
from compiler.schema.kinds import classify
from compiler.schema.validation import validate_document
from compiler.source.documents import SourceDocument

if TYPE_CHECKING:
    from compiler.cache.check_memo import CheckMemo
    from compiler.cache.entry_fragments import EntryFragments


def compile_documents(
    documents: list[SourceDocument], options: CompileOptions | None = None,
    loading: Sequence[Diagnostic] = (), memo: CheckMemo | None = None,
    fragments: EntryFragments | None = None,
) -> CompileResult:
    """Check every document and build the manifest when nothing is wrong.

    ``loading``: what reading the sources found (their errors also keep the manifest back).
    An override of a tool that a failed file may define is not reported as unknown: the
    file's own error is the one to fix. ``memo``: the capability checks' findings of
    unchanged files, taken instead of checking them again (compiler/cache/check_memo.py).
    ``fragments``: the stored bytes of unchanged entries, the manifest file written from
    them (compiler/cache/entry_fragments.py).
    """
    options = options or CompileOptions()
    check_capabilities = _CapabilityChecks(options, memo)
    documents_by_kind = _sort_documents(documents, loading, check_capabilities)
    capabilities = documents_by_kind.capabilities
    failed_tools = documents_by_kind.failed_tools
    found = list(documents_by_kind.found)
    if capabilities:
        found += check_capabilities.memoized(capabilities)
    found += check_unique_names(capabilities)
    found += check_plugin_failures(capabilities, options.plugins_snapshot)
    entries, pending, entry_problems, stand_ins = _build_entries(
        capabilities, documents_by_kind.overrides, options, failed_tools,
        fragments, lean=not documents_by_kind.profiles)
    found += entry_problems
    # What the manifest records of the plugin catalogue; the budget check costs internal
    # tools from the same section ``capc budget`` reads back, so the two cannot disagree.
    plugins_section = _plugins_section(entries, pending, options)
    profile_entries: tuple[ProfileEntry, ...] = ()
    if documents_by_kind.profiles:
        profile_entries, profile_problems = _check_profile_documents(
            documents_by_kind.profiles, entries, plugins_section, pending)
        found += profile_problems
    test_digests: dict[str, dict[str, str]] = {}
    tool_tests = documents_by_kind.tool_tests
    if tool_tests or options.require_tool_tests or any("tests" in d.data for d in capabilities):
        # Imported when a tree has cases (or must have them): most compiles never do.
        from compiler.tooltests.checks import check_tool_tests

        test_digests, test_problems = check_tool_tests(tool_tests, capabilities,
                                                       options.require_tool_tests, failed_tools)
        found += test_problems
    diagnostics = settle(found, strict=options.strict)
    if has_errors(diagnostics):
        return CompileResult(None, diagnostics)
    model = ManifestModel(
        capabilities=tuple(sorted(entries, key=lambda entry: entry.code)),
        overrides=tuple(pending),
        plugins=freeze(plugins_section),
        compiler=freeze({"name": "capc", "version": __version__}),
        manifest_version=MANIFEST_VERSION,
        profiles=profile_entries,
        tool_tests=freeze(test_digests),
    )
    written = fragments.manifest_result(model, diagnostics) if fragments is not None else None
    if written is None and stand_ins:  # the general path writes every entry: built whole
        model = replace(model, capabilities=tuple(sorted(
            (capability_entry(stand_ins[id(entry)][1]) if id(entry) in stand_ins else entry
             for entry in entries), key=lambda entry: entry.code)))
    return written or CompileResult(manifest_json(model), diagnostics)


class _CapabilityChecks:
    """Every check of capability documents, with one address policy per compile."""

    __slots__ = ("_memo", "_options", "_policy")

    def __init__(self, options: CompileOptions, memo: CheckMemo | None = None) -> None:
        self._options = options
        self._memo = memo
        self._policy: EgressPolicy | None = None

    def __call__(self, batch: list[SourceDocument]) -> list[Diagnostic]:
        """The diagnostics of ``batch``'s capabilities."""
        # Made at the first capability checked (a bad range raises where it did before
        # the policy was shared).
        if self._policy is None:
            self._policy = EgressPolicy(
                self._options.allow_private_networks,
                parse_allowed_networks(self._options.allowed_networks))
        return _check_capabilities(batch, self._options, self._policy)

    def validated(self, document: SourceDocument, kind: str) -> list[Diagnostic]:
        """``validate_document``, [] for the documents of a file the memo knows passed.

        The shortcut beside ``validate_document``: tests/cache/test_check_memo.py proves
        both give the same diagnostics."""
        memo = self._memo
        if memo is not None and document.path in memo.clean:
            return []
        problems = validate_document(document, kind)
        if problems:
            self.not_clean(document.path)
        return problems

    def not_clean(self, path: str) -> None:
        """Note that a document of the file at ``path`` failed classification or schema."""
        if self._memo is not None:
            self._memo.failed.add(path)

    def memoized(self, batch: list[SourceDocument]) -> list[Diagnostic]:
        """``self(batch)``, the files the memo knows answered from it and the others noted.

        The shortcut beside ``self(batch)``: tests/cache/test_check_memo.py proves both
        give the same diagnostics."""
        memo = self._memo
        if memo is None:
            return self(batch)
        fresh = [document for document in batch if document.path not in memo.known]
        found = self(fresh)  # even when empty: the policy is made (and refused) as before
        memo.record((document.path for document in fresh), found)
        return found + memo.recalled(document.path for document in batch)


@record(frozen=True, slots=True)
class _DocumentsByKind:
    """The documents that passed their schema, by kind, and what sorting them found."""

    capabilities: list[SourceDocument]
    overrides: list[SourceDocument]
    profiles: list[SourceDocument]
    tool_tests: list[SourceDocument]
    found: list[Diagnostic]
    failed_tools: set[str]


def _sort_documents(documents: list[SourceDocument], loading: Sequence[Diagnostic],
                    check_capabilities: _CapabilityChecks) -> _DocumentsByKind:
    """Classify and schema-check each document; sort the valid ones by kind."""
    sorted_documents = _DocumentsByKind([], [], [], [], list(loading),
                                        # A file that did not load at all: guess the tool
                                        # it defines from its name.
                                        {_stem(d.path) for d in loading
                                         if d.is_error and d.path})
    found, failed_tools = sorted_documents.found, sorted_documents.failed_tools
    for document in documents:
        document_or_none, kind, classified = classify(document)
        found += classified
        if document_or_none is None:
            check_capabilities.not_clean(document.path)
            failed_tools |= _declared_tool_names(document.data)
            continue
        schema_problems = check_capabilities.validated(document_or_none, kind)
        found += schema_problems
        if schema_problems:
            failed_tools |= _declared_tool_names(document.data)
            # What the schema did accept is still checked: one wrong field must not hide
            # the errors of the others (never built: the file's errors keep it back).
            remainder = checkable_remainder(document_or_none, kind) if kind == "Capability" \
                else None
            if remainder is not None:
                found += check_capabilities([remainder])
            continue
        sorted_into = {"Capability": sorted_documents.capabilities,
                       "Profile": sorted_documents.profiles,
                       "ToolTest": sorted_documents.tool_tests}.get(kind,
                                                                    sorted_documents.overrides)
        sorted_into.append(document_or_none)
    return sorted_documents


def _build_entries(
    capabilities: list[SourceDocument], overrides: list[SourceDocument],
    options: CompileOptions, failed_tools: set[str], fragments: EntryFragments | None = None,
    lean: bool = False,
) -> tuple[list[CapabilityEntry], list[PendingOverride], list[Diagnostic], _StandIns]:
    """The capabilities' entries with pins and overrides applied, the overrides left for
    boot, what pinning and overriding found, and the stand-ins among the entries.

    ``lean`` (no profile reads the entries) and no override in the tree: an api
    capability whose bytes are stored gets a stand-in (``normalize.stored_entry``), by id
    with its document, the entry built whole only if the manifest is not written from the
    stored bytes. The shortcut beside ``capability_entry``. Proven equal by
    tests/cache/test_entry_fragments.py::test_stand_ins_write_the_bytes_of_whole_entries."""
    found: list[Diagnostic] = []
    stand_ins: _StandIns = {}
    lean = lean and fragments is not None and not overrides
    built = [capability_entry(document) for document in capabilities] if not lean \
        else [_lean_entry(document, fragments, stand_ins) for document in capabilities]
    if fragments is not None:
        fragments.note_built(capabilities, built)
    if options.pins is not None:
        pinned, pin_problems = _pin_servers(capabilities, built, options)
        built, found = pinned, found + pin_problems
    overrides, pin_overrides = _split_pin_overrides(overrides)
    built, pin_override_problems = apply_pin_overrides(pin_overrides, built)
    found += pin_override_problems
    # (A tool is set with its api block, but on a stand-in: no override reads its arguments.)
    api_tools = {entry.tool.original_name: (entry.tool, tuple(entry.api.arguments)
                                            if entry.api is not None else ())
                 for entry in built if entry.tool is not None}
    known_plugin_tools = options.plugin_tools | plugin_tool_names(options.plugins_snapshot)
    override_result = apply_tree_overrides(overrides, api_tools, known_plugin_tools,
                                           unresolved=failed_tools)
    entries = override_result.applied_to(built)
    found += override_result.diagnostics
    found += check_plugin_tool_overrides(overrides, options.plugins_snapshot, api_tools)
    final_api_tools = {entry.tool.original_name: entry.tool for entry in entries
                       if entry.tool is not None}
    found += check_final_tool_names(overrides, final_api_tools, known_plugin_tools)
    return entries, override_result.pending, found, stand_ins


_StandIns = dict[int, tuple[CapabilityEntry, SourceDocument]]


def _lean_entry(document: SourceDocument, fragments: EntryFragments | None,
                stand_ins: _StandIns) -> CapabilityEntry:
    """The document's stand-in (noted in ``stand_ins``) when its entry's bytes are stored,
    else its entry (see _build_entries)."""
    if fragments is None or document.data["type"] != "api" or not fragments.stored(document):
        return capability_entry(document)
    entry = stored_entry(document)
    stand_ins[id(entry)] = (entry, document)
    return entry


def _check_profile_documents(
    profiles: list[SourceDocument], entries: list[CapabilityEntry],
    plugins_section: dict[str, Any], pending: list[PendingOverride],
) -> tuple[tuple[ProfileEntry, ...], list[Diagnostic]]:
    """The profiles' manifest entries and every profile check's diagnostics."""
    # Imported when a tree has profiles: their budget check brings the provider
    # tables and logging, which most compiles never use.
    from compiler.profiles.budget_check import check_profile_budgets
    from compiler.profiles.check import check_profiles
    from compiler.profiles.namespaces import check_namespaces

    profile_entries, found = check_profiles(profiles, built_codes(entries))
    found += check_profile_budgets(profiles, profile_entries, entries, plugins_section, pending)
    found += check_namespaces(profiles, profile_entries, entries, plugins_section, pending)
    return profile_entries, found


def built_codes(entries: list[CapabilityEntry]) -> list[str]:
    """The capability codes a profile may name."""
    return [entry.code for entry in entries]


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    for suffix in (".yaml.j2", ".yml.j2", ".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _declared_tool_names(data: Any) -> set[str]:
    """The tool names a document that failed its checks may have meant to define."""
    if not isinstance(data, dict):
        return set()
    options = data.get("options")
    names = [data.get("code"), options.get("name") if isinstance(options, dict) else None]
    return {name for name in names if isinstance(name, str)}


def _check_capabilities(documents: list[SourceDocument], options: CompileOptions,
                        policy: EgressPolicy) -> list[Diagnostic]:
    """Every check of each capability document, one check at a time over all of them
    (``check_api_documents`` says why; the run's diagnostics are settled and sorted)."""
    apis, servers, internals = [], [], []
    # The checks every kind has run in the pass that sorts the documents: one visit of each
    # document fewer (the order of a run's diagnostics is settle's, not this list's).
    found: list[Diagnostic] = []
    for document in documents:
        kind = document.data["type"]
        if kind == "api":
            apis.append(document)
        elif kind == "mcp":
            servers.append(document)
        elif kind == "internal":
            internals.append(document)
        found += check_when(document, options.context_attributes)
        found += check_scaffold_placeholders(document)
    found += check_api_documents(apis, options.allow_private_networks, policy)
    for document in servers:
        found += check_mcp(document, options.allow_private_networks, policy)
    for document in internals:
        found += check_internal_codes(document, options.plugins_snapshot)
    return found


def _pin_servers(capabilities: list[SourceDocument], entries: list[CapabilityEntry],
                 options: CompileOptions) -> tuple[list[CapabilityEntry], list[Diagnostic]]:
    """Check each MCP capability against the lock; its entry carries its pins."""
    lock = options.pins or {}
    found: list[Diagnostic] = []
    pinned: list[CapabilityEntry] = []
    for document, entry in zip(capabilities, entries, strict=True):
        if entry.mcp is not None:
            found += check_pins(document, lock, options.lock_path)
            server = lock.get(entry.mcp.server_label)
            if server is not None and server.server_url == entry.mcp.server_url:
                entry = replace(entry, mcp=replace(entry.mcp, pins=pinned_tools(server)))
        pinned.append(entry)
    return pinned, found


def _split_pin_overrides(
    overrides: list[SourceDocument],
) -> tuple[list[SourceDocument], list[SourceDocument]]:
    """(overrides of tree and plugin tools, overrides of pinned MCP tools ``LABEL/TOOL``)."""
    pinned = [document for document in overrides if is_pinned_target(document.data["tool"])]
    others = [document for document in overrides if not is_pinned_target(document.data["tool"])]
    return others, pinned


def _plugins_section(entries: list[CapabilityEntry], pending: list[PendingOverride],
                     options: CompileOptions) -> dict[str, Any]:
    """The catalogue's part the tree uses: the codes it names, the tools it overrides."""
    snapshot = options.plugins_snapshot
    if not has_catalogue(snapshot):
        return dict(snapshot)
    codes = {code for entry in entries for code in entry.internal_codes}
    return recorded_snapshot(snapshot, codes, {override.tool for override in pending})
