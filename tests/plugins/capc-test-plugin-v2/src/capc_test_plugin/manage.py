"""The reference's Manage example: register(registry_fn, context=None) using the context."""

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, Field


class SearchMattersInput(BaseModel):
    query: str = Field(description="Search text for matters")
    limit: int = Field(default=20, description="Maximum results")


@tool("search_matters", args_schema=SearchMattersInput)
async def search_matters(query: str, limit: int, config: RunnableConfig) -> str:
    """
    Search for matters/cases by text query in the management system.
    Returns matching matters with their reference numbers and titles.
    """
    return f"matters matching {query!r} (limit={limit})"


class CreateTimerInput(BaseModel):
    matter_id: int = Field(description="The matter ID to log time against")
    description: str = Field(description="Description of the work performed")


@tool("create_timer", args_schema=CreateTimerInput)
async def create_timer(matter_id: int, description: str, config: RunnableConfig) -> str:
    """
    Create a new active timer for a matter in the management system.
    The timer starts immediately and can be stopped later.
    """
    return f"timer started on matter {matter_id}: {description}"


class SearchTableInput(BaseModel):
    table: str = Field(description="Table to search")


@tool("search_table", args_schema=SearchTableInput)
async def search_table(table: str, config: RunnableConfig) -> str:
    """Search a table in the management system."""
    return f"rows of {table}"


manage_toolkit = [
    search_matters,
    create_timer,
]


def _document_tool(document_service):
    @tool("manage_attach_document")
    async def manage_attach_document(document_id: int, config: RunnableConfig) -> str:
        """Attach a chat document to the current matter."""
        document = await document_service.get_document_by_id(document_id)
        return f"attached {document_id}" if document is not None else "no such document"

    return manage_attach_document


def register(registry_fn, context=None):
    """Called at startup via entry-point discovery; context is optional."""
    registry_fn("obviously_manage", manage_toolkit,
        name="Manage",
        description="Search and manage matters, timers, and billing"
    )
    registry_fn("manage_search", [search_table],
        name="Manage Search", description="Search tables in the management system")
    if context is not None and getattr(context, "document_service", None) is not None:
        registry_fn("obviously_manage", [_document_tool(context.document_service)])
