"""``capc new KIND NAME``: a commented capability file that compiles as written.

``internal`` scaffolds are filled from what the installed plugins register (the YAML
counterpart of the reference's "create from registered tool"); ``api`` and ``mcp`` ones
are templates to edit. Every file starts with the ``yaml-language-server`` schema line so
editors complete and validate it. Existing files are never overwritten.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import CapcError, UsageError

KINDS = ("internal", "api", "mcp")
CODE_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# A scalar YAML reads back as the same string: no indicator first, no `: ` or ` #` inside.
_PLAIN = re.compile(r"^[A-Za-z0-9(][^:#\n\"'`{}\[\]|>&*!%@]*$")
_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


class ScaffoldError(CapcError):
    """A scaffold that cannot be written (unknown code, existing file)."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Scaffold:
    """A file to write: where, and its text."""

    path: Path
    text: str


def default_path(kind: str, name: str) -> Path:
    """Where a capability of ``kind`` goes: ROOT/KIND/NAME.yaml, ROOT the project's first
    ``[tool.capc] roots`` entry (``capabilities`` by default), so compile sees it."""
    from compiler.project import read_project_settings

    tree = Path(read_project_settings().roots[0])
    if tree.is_file():  # a root may be one file: its folder is the tree
        tree = tree.parent
    return tree / kind / f"{name}.yaml"


def scaffold(kind: str, name: str, path: Path, catalogue: Mapping[str, Any] | None = None
             ) -> Scaffold:
    """The scaffold of ``kind`` named ``name`` for ``path``; ``internal`` needs ``catalogue``."""
    if kind not in KINDS:
        raise UsageError(f"unknown kind {kind!r}; supported: {', '.join(KINDS)}")
    if not CODE_PATTERN.fullmatch(name):
        raise UsageError(f"{name!r} is not a capability code (^[a-z][a-z0-9_]{{0,63}}$)")
    header = f"# yaml-language-server: $schema={_schema_reference(path)}\n#\n"
    if kind == "internal":
        return Scaffold(path, header + _internal(name, catalogue or {}))
    return Scaffold(path, header + (_api(name) if kind == "api" else _mcp(name)))


def write_scaffold(scaffold: Scaffold) -> None:
    """Create the file (and its folders); refuse when it already exists."""
    scaffold.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with scaffold.path.open("x", encoding="utf-8") as stream:
            stream.write(scaffold.text)
    except FileExistsError:
        raise ScaffoldError(f"{scaffold.path.as_posix()} already exists; "
                            "not overwriting it (choose another path with -o)") from None


def refuse_existing_code(code: str, roots: Sequence[str]) -> None:
    """Raise when a capability under ``roots`` already uses ``code`` (codes are unique)."""
    from compiler.authoring.tree import existing_codes

    found = existing_codes(list(dict.fromkeys(roots))).get(code)
    if found is not None:
        raise ScaffoldError(f"code {code!r} already exists ({found.path}:{found.line}); "
                            "capability codes are unique: choose another name")


def _schema_reference(path: Path) -> str:
    # Relative, like the shipped tree, so it works on every checkout of the project; the
    # schemas sit at the project root (ensure_editor_schemas), wherever capc runs.
    from compiler.authoring.tree import schema_reference_from

    return schema_reference_from(path.parent or Path("."))


def scalar(value: str) -> str:
    """``value`` as a YAML scalar: plain when that reads back unchanged, else double-quoted."""
    if _PLAIN.match(value) and value == value.strip() and value.lower() not in _YAML11_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


def _title(name: str) -> str:
    return name.replace("_", " ").title()


def _internal(code: str, catalogue: Mapping[str, Any]) -> str:
    found = _registration(code, catalogue)
    distribution, entry, registered = found
    tools = ", ".join(registered["tools"]) or "(none)"
    name = registered["name"] or _title(code)
    description = registered["description"]
    points = ", ".join(registered.get("entry_points") or [])
    lines = [
        f"# Internal capability: the Python tools that plugins register under code {code!r}.",
        f"# Registered by {distribution} {entry['version']} (entry point {points}):",
        f"#   {tools}",
        "# Name and description come from the registration; edit them freely.",
        "apiVersion: capc/v1",
        "kind: Capability",
        f"code: {code}",
        f"name: {scalar(name)}",
        f"description: {scalar(description)}" if description else
        "# description: what these tools are for (shown to admins)",
        "type: internal",
        "# Activate several registry codes with this one capability (default: its code):",
        "# options:",
        f"#   codes: [{code}]",
        "# Offer it only in some contexts: a condition over RuntimeContext attributes",
        "# (equality, {in: [...]}, not, all, any).",
        "# when:",
        "#   page_type: canvas",
    ]
    return "\n".join(lines) + "\n"


def _registration(code: str, catalogue: Mapping[str, Any]
                  ) -> tuple[str, Mapping[str, Any], Mapping[str, Any]]:
    known: list[str] = []
    for distribution, entry in sorted((catalogue.get("distributions") or {}).items()):
        if code in entry["codes"]:
            return distribution, entry, entry["codes"][code]
        known += entry["codes"]
    close = difflib.get_close_matches(code, sorted(known), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listing = ", ".join(sorted(known)) or "none (is the plugin installed?)"
    raise ScaffoldError(f"no installed plugin registers code {code!r}{hint} "
                        f"(registered codes: {listing}; see `capc plugins`)")


def _api(code: str) -> str:
    setting = f"{code.upper()}_API_KEY"
    return f"""\
# API capability: one REST endpoint becomes one tool the model can call.
# - `params` are query-string arguments, `path_params` fill {{slot}}s of the url, `body`
#   fields a JSON body (POST/PUT/PATCH), `files` chat documents sent as multipart.
# - ${{{setting}}} is a user setting, resolved per user at agent boot (never write
#   a secret here).
apiVersion: capc/v1
kind: Capability
code: {code}
name: {scalar(_title(code))}
description: "TODO: what this capability is for (shown to admins)"
type: api
options:
  name: {code}                       # the tool name the model calls (default: the code)
  description: "TODO: what the tool does; the model reads this to decide when to call it"
  method: GET
  url: https://todo.example.com/v1/items/{{item_id}}  # TODO: the real endpoint
  path_params:
    item_id:
      type: string
      description: The id of the item to read
      required: true
  params:
    limit:
      type: integer                  # string, integer, number, boolean, array or object
      description: Maximum number of results
      required: false
      default: 10
  headers:
    Authorization: Bearer ${{{setting}}}
  # timeout: 30                      # seconds
  # max_response_bytes: 1048576
"""


def _mcp(code: str) -> str:
    setting = f"{code.upper()}_TOKEN"
    return f"""\
# MCP capability: a remote MCP server the model talks to (OpenAI Responses API,
# Anthropic MCP connector, or client-side through langchain-mcp-adapters).
# - `require_approval: never` is what lets Anthropic models use it too (Anthropic has no
#   approval flow; "always" keeps a human in the loop on OpenAI and skips Anthropic).
# - Anthropic accepts one Bearer token in Authorization only: any other header (or a
#   non-Bearer scheme) is dropped with a warning and the server is attached without it
#   (toolset.mcp("anthropic", unsupported_auth="skip") leaves such a server out instead).
apiVersion: capc/v1
kind: Capability
code: {code}
name: {scalar(_title(code))}
description: "TODO: what this server offers (shown to admins)"
type: mcp
options:
  server_label: {code}
  server_url: https://todo.example.com/mcp   # TODO: the real server
  require_approval: never
  headers:
    Authorization: Bearer ${{{setting}}}
  # Only these tools of the server (default: all of them):
  # allowed_tools: [search, fetch]
"""
