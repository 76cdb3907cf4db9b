"""Release 0.2.0 of the CRM example: the search tool gained a filter and a new default."""

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, Field


class SearchContactsInput(BaseModel):
    query: str = Field(description="Name, email, or phone number to search for")
    limit: int = Field(default=25, description="Maximum number of results")
    country: str = Field(default="", description="Only contacts in this country (ISO code)")


@tool("crm_search_contacts", args_schema=SearchContactsInput)
async def crm_search_contacts(
    query: str, limit: int, country: str, config: RunnableConfig
) -> str:
    """
    Search for contacts in the CRM by name, email, or phone number.
    Returns a list of matching contacts with their basic details.
    """
    return f"contacts matching {query!r} in {country or 'any country'} (limit={limit})"


class CreateContactInput(BaseModel):
    first_name: str = Field(description="Contact's first name")
    last_name: str = Field(description="Contact's last name")
    email: str = Field(description="Contact's email address")
    company: str = Field(default="", description="Company name (optional)")


@tool("crm_create_contact", args_schema=CreateContactInput)
async def crm_create_contact(
    first_name: str, last_name: str, email: str, company: str,
    config: RunnableConfig,
) -> str:
    """
    Create a new contact in the CRM system.
    Returns the created contact's ID and a confirmation message.
    """
    return f"created {first_name} {last_name} <{email}> at {company or '-'}"


crm_toolkit = [
    crm_search_contacts,
    crm_create_contact,
]


def register(registry_fn):
    """Entry point called at startup."""
    registry_fn("crm", crm_toolkit,
        name="CRM Integration",
        description="Search and manage contacts in the CRM system"
    )
