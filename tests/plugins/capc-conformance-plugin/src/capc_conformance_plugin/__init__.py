"""The tools the MCP conformance runner's server scenarios call (see README.md)."""

from typing import Any

from langchain_core.tools import StructuredTool, tool

SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
# A 1x1 red PNG and eight samples of silence as WAV, base64 (what the scenarios ask for).
PNG_BASE64 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ"
              "/pLvAAAAAElFTkSuQmCC")
WAV_BASE64 = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

# The input schema of the json-schema-2020-12 scenario, exactly as the runner expects it.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@tool("test_simple_text")
def test_simple_text() -> str:
    """Return a simple text response (the conformance runner's tools-call-simple-text)."""
    return SIMPLE_TEXT


@tool("test_image_content")
def test_image_content() -> list[dict[str, str]]:
    """Return a tiny PNG image (the conformance runner's tools-call-image)."""
    return [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]


@tool("test_audio_content")
def test_audio_content() -> list[dict[str, str]]:
    """Return a tiny WAV clip (the conformance runner's tools-call-audio)."""
    return [{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}]


@tool("test_error_handling")
def test_error_handling() -> str:
    """Always fail (the conformance runner's tools-call-error)."""
    raise RuntimeError(ERROR_TEXT)


def _describe(name: str = "", address: dict[str, Any] | None = None) -> str:
    city = (address or {}).get("city", "nowhere")
    return f"{name or 'someone'} in {city}"


json_schema_2020_12_tool = StructuredTool.from_function(
    _describe, name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    args_schema=JSON_SCHEMA_2020_12)


def register(registry_fn):
    """Entry point: every fixture tool under the code ``conformance``."""
    registry_fn("conformance", [test_simple_text, test_image_content, test_audio_content,
                                test_error_handling,
                                json_schema_2020_12_tool],
                name="Conformance fixtures",
                description="The tools the MCP conformance scenarios call")
