"""Release 0.2.0 of the memory tools: ``memory__recall`` was dropped."""

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, Field


class RememberInput(BaseModel):
    content: str = Field(description="What to remember")


@tool("memory__remember", args_schema=RememberInput)
async def remember(content: str, config: RunnableConfig) -> str:
    """Store a fact in long-term memory."""
    return f"remembered: {content}"


def register(registry_fn):
    """Entry point called at startup."""
    registry_fn("memory", [remember],
        name="Memory", description="Long-term memory across chats")
