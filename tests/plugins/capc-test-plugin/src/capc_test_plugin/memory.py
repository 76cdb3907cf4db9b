"""PromptKit-style memory tools (``memory__`` namespace), targets of the override tests."""

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, Field


class RememberInput(BaseModel):
    content: str = Field(description="What to remember")


@tool("memory__remember", args_schema=RememberInput)
async def remember(content: str, config: RunnableConfig) -> str:
    """Store a fact in long-term memory."""
    return f"remembered: {content}"


class RecallInput(BaseModel):
    query: str = Field(description="What to look for")


@tool("memory__recall", args_schema=RecallInput)
async def recall(query: str, config: RunnableConfig) -> str:
    """Recall facts from long-term memory."""
    return f"recalled: {query}"


def register(registry_fn):
    """Entry point called at startup."""
    registry_fn("memory", [remember, recall],
        name="Memory", description="Long-term memory across chats")
