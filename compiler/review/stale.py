"""Why ``capc compile --check`` found the manifest stale, in words a fix can follow.

The manifest does not record the options it was compiled with (its bytes depend only on
the sources), so the explanation is found by comparison: the recorded compiler version,
the entries that differ, and whether compiling with the other ``--plugins`` setting would
have produced exactly the file on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compiler import __version__
from compiler.runtime.errors import ManifestError
from compiler.runtime.manifest.read import verified_document

MAX_LISTED = 5


def explain_stale(output: str, current: bytes | None, fresh: Mapping[str, Any],
                  plugins_enabled: bool, recompile_other_plugins: Callable[[], bytes | None],
                  ) -> str:
    """The ``stale-manifest`` message for ``output`` (``current`` is None when it is missing).

    ``fresh`` is the manifest the check compiled; ``recompile_other_plugins`` compiles the
    same sources with the opposite plugin setting (None when that fails) and is called only
    when nothing cheaper explains the difference.
    """
    if current is None:
        make = " (in this repository: `make compile`)" if _has_make_compile() else ""
        return f"{output} is missing: run `capc compile` first{make}"
    recorded, refusal = _verified(output, current)
    if recorded is None:
        return (f"{output} is not a valid capc manifest ({refusal}): run `capc compile` to "
                "rewrite it")
    version = (recorded.get("compiler") or {}).get("version")
    if version != __version__:
        return (f"{output} was written by capc {version or 'of unknown version'}; this is capc "
                f"{__version__}: recompile with this version{_commit(output, ' the result')}")
    if recompile_other_plugins() == current:
        used, now = ("--plugins", "without") if not plugins_enabled else ("--no-plugins", "with")
        setting = "true" if not plugins_enabled else "false"
        return (f"{output} was compiled with {used}, this check ran {now} plugins: set "
                f"`plugins = {setting}` in [tool.capc] of pyproject.toml so that compile and "
                "check agree (or pass the same flag to both)")
    differences = _differences(recorded, dict(fresh))
    return (f"{output} differs from what the sources compile to ({differences}): run "
            "`capc compile` with the same sources, --vars files and options as this check "
            f"(all taken from [tool.capc] when given there){_commit(output, ' it')}")


def _has_make_compile() -> bool:
    """Whether ./Makefile has a ``compile`` target (capc's own checkout; adopters need not)."""
    try:
        with open("Makefile", encoding="utf-8") as makefile:
            return any(line.startswith("compile:") for line in makefile)
    except (OSError, UnicodeDecodeError):
        return False


def _commit(output: str, what: str) -> str:
    """`` and commit{what}`` when git tracks ``output``'s path; nothing when the manifest is
    ignored (CI builds it) or there is no repository, where "commit" would mislead."""
    import subprocess

    try:
        ignored = subprocess.run(["git", "check-ignore", "-q", output], capture_output=True,
                                 timeout=30, check=False).returncode
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return f" and commit{what}" if ignored == 1 else ""


def _verified(output: str, content: bytes) -> tuple[dict[str, Any] | None, str]:
    """The recorded manifest after the checks every reader makes, or None and why not."""
    try:
        return verified_document(content, output), ""
    except ManifestError as refused:
        return None, f"{refused.check}: {refused.detail}"
    except RecursionError:
        return None, "json: the JSON is nested too deeply"


def _differences(recorded: dict[str, Any], fresh: dict[str, Any]) -> str:
    """A short list of what differs: capability codes added, removed, changed; sections."""
    old = _by_code(recorded.get("capabilities"))
    new = _by_code(fresh.get("capabilities"))
    parts = []
    for label, codes in (("new", sorted(new.keys() - old.keys())),
                         ("gone", sorted(old.keys() - new.keys())),
                         ("changed", sorted(c for c in old.keys() & new.keys()
                                            if old[c] != new[c]))):
        if codes:
            shown = ", ".join(codes[:MAX_LISTED])
            more = f" and {len(codes) - MAX_LISTED} more" if len(codes) > MAX_LISTED else ""
            parts.append(f"{label}: {shown}{more}")
    for section in ("overrides", "plugins"):
        if recorded.get(section) != fresh.get(section):
            parts.append(f"the {section} section")
    return "; ".join(parts) or "formatting or digest only"


def _by_code(entries: Any) -> dict[str, Any]:
    if not isinstance(entries, list):
        return {}
    return {str(entry.get("code")): entry for entry in entries if isinstance(entry, dict)}
