"""Who is calling a served endpoint: the ``Identity`` value and the ``Authenticator`` seam.

``capc serve`` asks its authenticator (if any) about every HTTP request before any MCP
handling. The built-in OAuth 2.1 resource server (``compiler.runtime.serve.auth``) and a
host application's own check satisfy the same protocol, so the server core never knows
how a token was checked, only who it names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from compiler.runtime.context import RuntimeContext

@dataclass(frozen=True, slots=True)
class Identity:
    """An authenticated caller: the ids a ``RuntimeContext`` is built from, and its grants.

    ``claims`` are the verified token's claims (read-only); they never appear in a repr,
    since a host may put personal data in them.
    """

    user_id: Any = None
    group_id: Any = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}),
                                      repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen all the way down: a caller's grants cannot change after they are checked.
        object.__setattr__(self, "scopes", frozenset(self.scopes))
        object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))


ANONYMOUS = Identity()
"""The caller of a server without an authenticator (loopback or ``--no-auth``)."""


@runtime_checkable
class Authenticator(Protocol):
    """Checks each HTTP request before MCP handling; answers who it is or a refusal."""

    async def authenticate(self, request: Request) -> Identity | Response:
        """The caller's identity, or the response to send instead (e.g. a 401)."""
        ...

    def metadata_routes(self) -> list[Route]:
        """Routes the server mounts beside its endpoints (protected-resource metadata)."""
        ...


ContextFactory = Callable[["Request", Identity], "Awaitable[RuntimeContext] | RuntimeContext"]
"""A host app's request → ``RuntimeContext`` function, called once per MCP request."""


def profile_allowed(
    identity: Identity, profile: str, profile_scopes: Mapping[str, str] | None
) -> bool:
    """Whether ``identity`` may use ``profile``: a profile mapped to a scope needs it."""
    if not profile_scopes:
        return True
    required = profile_scopes.get(profile)
    return required is None or required in identity.scopes
