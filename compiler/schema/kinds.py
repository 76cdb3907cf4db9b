"""Which kind a document is: ``apiVersion``/``kind``, legacy rows upgraded in memory."""

from __future__ import annotations

from compiler.diagnostics import Code, Diagnostic
from compiler.schema.legacy import CURRENT_API_VERSION as API_VERSION
from compiler.schema.legacy import is_legacy_row, migrate_document, newer_version_message
from compiler.source.documents import SourceDocument

DOCUMENT_TYPE = Code("document-type", "a document is not a mapping with apiVersion and kind")
LEGACY_ROW = Code("legacy-row", "a legacy row is malformed or cannot be migrated")
UNKNOWN_API_VERSION = Code("unknown-api-version", "an unknown apiVersion")
UNKNOWN_KIND = Code("unknown-kind", "an unknown kind")
CODES = (DOCUMENT_TYPE, LEGACY_ROW, UNKNOWN_API_VERSION, UNKNOWN_KIND)

SCHEMA_FILES: dict[tuple[str, str], str] = {
    (API_VERSION, "Capability"): "capability-v1.json",
    (API_VERSION, "ToolOverride"): "tool-override-v1.json",
    (API_VERSION, "Profile"): "profile-v1.json",
    (API_VERSION, "ToolTest"): "tooltest-v1.json",
}
SUPPORTED_KINDS = tuple(kind for _, kind in SCHEMA_FILES)
# Published by ``capc schema``: the document kinds, and the manifest itself (not a source
# document kind: ``classify`` never yields it), for other languages that read manifests.
MANIFEST_SCHEMA_FILE = "manifest-v1.json"
PUBLISHED_SCHEMAS: dict[str, str] = {
    **{kind: file_name for (_, kind), file_name in SCHEMA_FILES.items()},
    "Manifest": MANIFEST_SCHEMA_FILE,
}


def classify(document: SourceDocument) -> tuple[SourceDocument | None, str, list[Diagnostic]]:
    """Upgrade legacy rows and check apiVersion/kind; returns (document, kind, diagnostics)."""
    data = document.data
    at = document.location
    if not isinstance(data, dict):
        return None, "", [Diagnostic.error(at(), DOCUMENT_TYPE,
                                           "a document must be a mapping with apiVersion and kind")]
    # A document naming its apiVersion is never a legacy row: most skip the row test.
    if "apiVersion" not in data and is_legacy_row(data):
        try:
            upgraded, _ = migrate_document(data)
        except ValueError as error:
            return None, "", [Diagnostic.error(at(), LEGACY_ROW, f"legacy row: {error}")]
        warning = Diagnostic.warning(at(), LEGACY_ROW,
                                     "legacy capability row (no apiVersion/kind) upgraded to "
                                     f"{API_VERSION} in memory; run `capc migrate` to rewrite it")
        return document.with_data(upgraded), "Capability", [warning]
    version = data.get("apiVersion")
    if version != API_VERSION:
        newer = newer_version_message(version)
        where = at(("apiVersion",)) if "apiVersion" in data else at()
        message = newer or (f"unknown apiVersion {_shown(version)}; supported: {API_VERSION}"
                            if "apiVersion" in data else
                            f"missing apiVersion; supported: {API_VERSION}")
        return None, "", [Diagnostic.error(where, UNKNOWN_API_VERSION, message)]
    kind = data.get("kind")
    if kind not in SUPPORTED_KINDS:
        where = at(("kind",)) if "kind" in data else at()
        problem = f"unknown kind {_shown(kind)}" if "kind" in data else "missing kind"
        import difflib  # only an error's "did you mean" needs it
        close = (difflib.get_close_matches(kind, SUPPORTED_KINDS, n=1, cutoff=0.6)
                 if isinstance(kind, str) else [])
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return None, "", [Diagnostic.error(where, UNKNOWN_KIND,
                                           f"{problem}{hint} (supported: "
                                           + ", ".join(SUPPORTED_KINDS) + ")")]
    return document, str(kind), []


def _shown(value: object) -> str:
    """A YAML value as the author wrote it: strings quoted, an empty value as "empty"."""
    if value is None:
        return "(empty)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)
