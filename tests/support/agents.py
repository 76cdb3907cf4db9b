"""Agents with real clients and no network: a scripted chat model, provider look-alikes.

``ScriptedChatModel`` is a langchain-core chat model that answers from a script of
AIMessages (tool calls included) and records what it was bound to and what it was sent.
``provider_server`` runs a loopback server that answers as the OpenAI Responses API or the
Anthropic Messages API would, from a script, and records every request body, so the real
langchain-openai / langchain-anthropic clients can drive a LangGraph agent against it.
``unknown_keys`` checks a recorded body against an SDK TypedDict, nested keys included.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import typing_extensions
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr

from tests.support.runtime import ReceivedRequest, RecordingServer, recording_server


class ScriptedChatModel(BaseChatModel):
    """Answers with the next scripted message; ``bind_tools`` works as a real model's does."""

    script: list[AIMessage]
    _sent: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _bound: list[list[dict[str, Any]]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def sent(self) -> list[list[BaseMessage]]:
        """The messages of every call, in order."""
        return self._sent

    @property
    def bound_tools(self) -> list[list[dict[str, Any]]]:
        """The OpenAI-format tool schemas of every ``bind_tools`` call."""
        return self._bound

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        self._bound.append(formatted)
        return self.bind(tools=formatted, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self._sent.append(list(messages))
        index = min(len(self._sent) - 1, len(self.script) - 1)
        return ChatResult(generations=[ChatGeneration(message=self.script[index])])


def tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> AIMessage:
    """An AIMessage calling one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id,
                                              "type": "tool_call"}])


def openai_function_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A Responses API response whose output is one function call."""
    return _openai_response("resp_call", [{
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name,
        "arguments": json.dumps(arguments), "status": "completed",
    }])


def openai_text(text: str) -> dict[str, Any]:
    """A Responses API response whose output is one assistant message."""
    return _openai_response("resp_text", [{
        "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }])


def _openai_response(response_id: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    # Distinct ids: LangGraph's message reducer replaces a message that reuses an id.
    return {
        "id": response_id, "object": "response", "created_at": 1, "status": "completed",
        "model": "gpt-4.1", "output": output, "parallel_tool_calls": True,
        "tool_choice": "auto", "tools": [], "error": None, "incomplete_details": None,
        "instructions": None, "metadata": {}, "temperature": 1.0, "top_p": 1.0,
        "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def anthropic_tool_use(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A Messages API response that calls one tool."""
    return _anthropic_message(
        "msg_call", [{"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}],
        "tool_use",
    )


def anthropic_text(text: str) -> dict[str, Any]:
    """A Messages API response with one text block."""
    return _anthropic_message("msg_text", [{"type": "text", "text": text}], "end_turn")


def _anthropic_message(
    message_id: str, content: list[dict[str, Any]], stop_reason: str
) -> dict[str, Any]:
    return {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }


@contextmanager
def provider_server(answers: Sequence[dict[str, Any]]) -> Iterator[RecordingServer]:
    """A loopback provider answering the n-th POST with ``answers[n]`` (the last repeats)."""
    with recording_server() as server:
        def respond(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
            index = min(len(server.received) - 1, len(answers) - 1)
            return 200, {"Content-Type": "application/json"}, json.dumps(answers[index]).encode()

        server.responder = respond
        yield server


def request_bodies(server: RecordingServer) -> list[dict[str, Any]]:
    """Every JSON body the server received, in order."""
    return [json.loads(request.body) for request in server.received]


def unknown_keys(value: Any, annotation: Any, where: str = "$") -> list[str]:
    """Keys of ``value`` that the (TypedDict) ``annotation`` does not declare, at any depth.

    pydantic validates TypedDicts with extra keys ignored; this finds them. A union is
    matched by its members' ``type`` literal where it has one.
    """
    origin = typing.get_origin(annotation)
    if origin in (typing.Annotated, typing.Required, typing.NotRequired,
                  typing_extensions.Required, typing_extensions.NotRequired):
        return unknown_keys(value, typing.get_args(annotation)[0], where)
    if origin in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        # A TypedDict member counts when its `type` literal matches; any other member
        # (a plain Dict[str, object] among them) always does.
        candidates = [member for member in members if _type_literal_matches(member, value)
                      or not _is_typed_dict(member)]
        results = [unknown_keys(value, member, where) for member in candidates or members]
        return min(results, key=len) if results else []
    if _is_typed_dict(annotation) and isinstance(value, Mapping):
        hints = typing.get_type_hints(annotation, include_extras=True)
        found = [f"{where}.{key}" for key in value if key not in hints]
        for key, item in value.items():
            if key in hints:
                found += unknown_keys(item, hints[key], f"{where}.{key}")
        return found
    if origin in (list, tuple, Iterable, Sequence, typing.Iterable) or (
        isinstance(origin, type) and issubclass(origin, Iterable) and origin not in (str, dict)
    ):
        args = typing.get_args(annotation)
        if args and isinstance(value, list):
            return [key for index, item in enumerate(value)
                    for key in unknown_keys(item, args[0], f"{where}[{index}]")]
    return []


def _is_typed_dict(annotation: Any) -> bool:
    # The SDKs declare theirs with typing_extensions, which typing.is_typeddict misses.
    return isinstance(annotation, type) and typing_extensions.is_typeddict(annotation)


def _type_literal_matches(member: Any, value: Any) -> bool:
    if not (_is_typed_dict(member) and isinstance(value, Mapping) and "type" in value):
        return False
    hint = typing.get_type_hints(member, include_extras=True).get("type")
    while typing.get_origin(hint) in (typing.Annotated, typing.Required, typing.NotRequired,
                                      typing_extensions.Required, typing_extensions.NotRequired):
        hint = typing.get_args(hint)[0]
    return typing.get_origin(hint) is typing.Literal and value["type"] in typing.get_args(hint)

