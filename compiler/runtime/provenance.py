"""Where a tool came from: capability code, kind, manifest digest, profile (SPEC §13).

Every tool a resolve returns carries these in its LangChain ``metadata``, so LangSmith and
any callback handler (``on_tool_start(..., metadata=...)``) see which capability, which
manifest and which profile produced the call. The same facts become OpenTelemetry span
attributes (``compiler.runtime.telemetry``); both derive from :meth:`Provenance.fields`,
so the two can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ToolKind = Literal["internal", "api", "mcp"]

CAPABILITY_KEY = "capc.capability"
KIND_KEY = "capc.kind"
MANIFEST_DIGEST_KEY = "capc.manifest_digest"
PROFILE_KEY = "capc.profile"
# The key api tools carried before provenance existed; kept so existing handlers work.
LEGACY_CAPABILITY_KEY = "capability"


@dataclass(frozen=True, slots=True)
class Provenance:
    """What produced one tool: its capability, the kind of it, the manifest, the profile."""

    capability: str
    kind: ToolKind
    manifest_digest: str
    profile: str | None = None

    def fields(self) -> dict[str, str]:
        """The provenance as flat string fields (no profile key when none was used)."""
        fields = {
            CAPABILITY_KEY: self.capability,
            KIND_KEY: self.kind,
            MANIFEST_DIGEST_KEY: self.manifest_digest,
        }
        if self.profile is not None:
            fields[PROFILE_KEY] = self.profile
        return fields

    def metadata(self, existing: dict[str, Any] | None = None) -> dict[str, Any]:
        """LangChain ``metadata``: ``existing`` keys kept, capc's provenance over them."""
        return {**(existing or {}), LEGACY_CAPABILITY_KEY: self.capability, **self.fields()}


def tagged_tool(tool: Any, provenance: Provenance) -> Any:
    """A shallow copy of a LangChain tool carrying ``provenance`` in its metadata.

    Registry tools are shared by every manifest and profile, so they are copied, never
    changed: the plugin's own object keeps its own metadata.
    """
    metadata = provenance.metadata(dict(tool.metadata or {}))
    return tool.model_copy(update={"metadata": metadata})
