"""OpenAI namespaces in a LangChain agent: the middleware that regroups the bound tools.

``create_agent`` runs every LangChain tool it is given and binds the same list to the
model; a namespace must hold the definitions while the tools stay runnable. So the
regrouping happens per model call (``wrap_model_call``, the hook LangChain's own
``ProviderToolSearchMiddleware`` uses): the request's deferred tools of each namespace
(declared, or a multi-tool internal capability's own) become one ``namespace`` entry, for
OpenAI models on the Responses API only. Imported by
``Toolset.namespace_middleware`` alone, so the runtime needs ``langchain`` only there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest

from compiler.runtime.loading_policy import LoadingPolicy, openai_namespaced


class OpenAINamespaces(AgentMiddleware):
    """Sends a profile's namespaces to OpenAI; other models get the tools as they are."""

    def __init__(self, policy: LoadingPolicy, provider_of: Callable[[Any], str | None]) -> None:
        """``provider_of``: "openai" for the chat models whose requests take namespaces
        (``toolset.model_provider``, passed in so this module does not import the toolset)."""
        super().__init__()
        self.policy = policy
        self.provider_of = provider_of

    @property
    def name(self) -> str:
        # One per profile in an agent: LangChain refuses two middlewares of one name.
        return f"capc_openai_namespaces[{self.policy.profile}]"

    def grouped(self, request: ModelRequest) -> ModelRequest:
        """``request`` with its tools regrouped when it goes to an OpenAI model."""
        if (self.provider_of(request.model) != "openai"
                or not (self.policy.namespaces or self.policy.own_namespaces)
                # Chat Completions has no namespaces: only the Responses API takes them.
                or getattr(request.model, "use_responses_api", None) is False):
            return request
        return request.override(tools=openai_namespaced(request.tools, self.policy))

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], Any]) -> Any:
        """The call with the regrouped tools."""
        return handler(self.grouped(request))

    async def awrap_model_call(
        self, request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[Any]],
    ) -> Any:
        """The async call with the regrouped tools."""
        return await handler(self.grouped(request))
