"""A host application that registers its own tools, as the reference's did: a module-level
registry, ``tool_registrations.py`` calling ``register_tools``, a ``@capability``
decorator, and a plugin-style ``register(registry_fn)`` function."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "myapp/__init__.py": "",
    "myapp/tool_registry.py": '''\
from compiler.runtime import ToolRegistry

registry = ToolRegistry()
register_tools = registry.register_tools
capability = registry.capability
''',
    "myapp/tools/__init__.py": "",
    "myapp/tools/documents.py": '''\
from langchain_core.tools import tool

from myapp.tool_registry import capability


@capability("base", "rag")
@tool("get_document_text")
def get_document_text(document_id: int) -> str:
    """Return the text of a document of the current chat."""
    return "text"
''',
    "myapp/tool_registrations.py": '''\
from langchain_core.tools import tool

import myapp.tools.documents  # noqa: F401  (registers through @capability)
from myapp.tool_registry import register_tools


@tool("remember")
def remember(fact: str) -> str:
    """Remember a fact about the user."""
    return "ok"


register_tools("base", [remember], name="Base Tools", description="Core agent tools")
''',
    "myapp/crm.py": '''\
from langchain_core.tools import tool


@tool("find_contact")
def find_contact(name: str) -> str:
    """Find a contact in the CRM by name."""
    return "none"


def register(registry_fn):
    registry_fn("crm", [find_contact], name="CRM", description="Contacts")
''',
}

REGISTRATIONS = '["myapp.tool_registrations", "myapp.crm:register"]'


def write_host_app(root: Path) -> Path:
    """The application's package under ``root`` (the project root)."""
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def internal_capability(code: str) -> str:
    """An internal capability file drawing on the registry code ``code``."""
    return (f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code.title()}\n"
            f"description: The {code} tools of the application.\ntype: internal\n")
