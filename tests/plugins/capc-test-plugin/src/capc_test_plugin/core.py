"""Core agent tools under the reference's built-in codes: base, rag and canvas.

Written like a reference plugin: a one-parameter ``register`` and LangChain ``@tool``s
that read the user from ``RunnableConfig``.
"""

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, Field


@tool("get_current_user")
async def get_current_user(config: RunnableConfig) -> str:
    """Tell who the current user is (their id and group)."""
    configurable = config.get("configurable", {})
    return f"user {configurable.get('logged_user_id')} in group {configurable.get('group_id')}"


class SearchDocumentsInput(BaseModel):
    query: str = Field(description="What to look for in the chat's documents")
    limit: int = Field(default=5, description="Maximum passages to return")


@tool("search_documents", args_schema=SearchDocumentsInput)
async def search_documents(query: str, limit: int, config: RunnableConfig) -> str:
    """Search the documents of the current chat and return matching passages."""
    return f"no passages match {query!r} (limit {limit})"


class UpdateCanvasInput(BaseModel):
    content: str = Field(description="The new canvas content (Markdown)")


@tool("update_canvas", args_schema=UpdateCanvasInput)
async def update_canvas(content: str, config: RunnableConfig) -> str:
    """Replace the content of the canvas page the user is looking at."""
    return f"canvas updated ({len(content)} characters)"


def register(registry_fn):
    """Entry point called at startup."""
    registry_fn("base", [get_current_user], name="Base Tools", description="Core agent tools")
    registry_fn("rag", [search_documents, get_current_user],
                name="RAG", description="Retrieval-augmented generation")
    registry_fn("canvas", [update_canvas], name="Canvas",
                description="Tools that edit the canvas page")
