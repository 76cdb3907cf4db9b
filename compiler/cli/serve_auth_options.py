"""``capc serve``'s flags for the built-in OAuth 2.1 resource server, written once.

``serve_auth_options`` adds the flags to a command and hands it one frozen ``AuthOptions``
value (keyword ``auth``); ``build_authenticator`` turns that value into the runtime's
``ResourceServer``, or None when no flag asked for it. A flag given without the others it
needs is a usage error (exit 2) that names the missing flag, never a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from compiler.errors import UsageError

if TYPE_CHECKING:
    from compiler.runtime.serve.auth import ResourceServer

Command = TypeVar("Command", bound=Callable[..., Any])

_FLAG_NAMES = ("auth_issuer", "public_url", "auth_jwks", "auth_scopes",
               "auth_user_claim", "auth_group_claim", "auth_leeway")


@dataclass(frozen=True, slots=True)
class AuthOptions:
    """The resource-server flags as given (None where not given)."""

    issuer: str | None = None
    public_url: str | None = None
    jwks: str | None = None
    scopes: tuple[tuple[str, str], ...] = ()
    user_claim: str | None = None
    group_claim: str | None = None
    leeway_seconds: float | None = None

    @property
    def requested(self) -> bool:
        """Whether any flag of the resource server was given."""
        return any(value not in (None, ()) for value in (
            self.issuer, self.jwks, self.scopes, self.user_claim, self.group_claim,
            self.leeway_seconds))


def _profile_scope(_context: click.Context, _parameter: click.Parameter,
                   values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for value in values:
        profile, separator, scope = value.partition("=")
        if not separator or not profile or not scope:
            raise click.BadParameter("expected PROFILE=SCOPE", param_hint="--auth-scope")
        pairs.append((profile, scope))
    return tuple(pairs)


def serve_auth_options(command: Command) -> Command:
    """Add the resource-server flags; the command receives them as ``auth: AuthOptions``."""

    @functools.wraps(command)
    def with_auth(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _FLAG_NAMES}
        kwargs["auth"] = AuthOptions(
            issuer=given["auth_issuer"], public_url=given["public_url"],
            jwks=given["auth_jwks"], scopes=given["auth_scopes"],
            user_claim=given["auth_user_claim"], group_claim=given["auth_group_claim"],
            leeway_seconds=given["auth_leeway"])
        return command(*args, **kwargs)

    options = [
        click.option("--auth-issuer", metavar="URL", default=None,
                     help="Require bearer JWTs from this issuer (OAuth 2.1 resource server)."),
        click.option("--public-url", "--auth-audience", "public_url", metavar="URL",
                     default=None,
                     help="The server's public URL: the audience tokens must name, and the "
                          "base of the protected-resource metadata."),
        click.option("--auth-jwks", metavar="FILE|URL", default=None,
                     help="The issuer's signing keys: a JWKS file, or an https URL (fetched "
                          "with bounded size and time, again for an unknown key id)."),
        click.option("--auth-scope", "auth_scopes", multiple=True, metavar="PROFILE=SCOPE",
                     callback=_profile_scope,
                     help="A profile's endpoint requires this scope (repeatable)."),
        click.option("--auth-user-claim", metavar="CLAIM", default=None,
                     help="The claim that becomes user_id (default: sub)."),
        click.option("--auth-group-claim", metavar="CLAIM", default=None,
                     help="The claim that becomes group_id (default: none)."),
        click.option("--auth-leeway", type=click.FloatRange(0, 300), default=None,
                     metavar="SECONDS",
                     help="Clock skew allowed on exp and nbf (default: 30)."),
    ]
    decorated: Callable[..., Any] = with_auth
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[return-value]


def build_authenticator(options: AuthOptions) -> ResourceServer | None:
    """The ``ResourceServer`` the flags describe, or None when none was asked for."""
    if not options.requested:
        return None
    missing = [flag for flag, value in (("--auth-issuer", options.issuer),
                                        ("--public-url", options.public_url),
                                        ("--auth-jwks", options.jwks)) if not value]
    if missing:
        raise UsageError("the OAuth resource server needs " + ", ".join(missing))
    # Imported here: the runtime's serve stack (starlette, PyJWT) loads only for serve.
    from compiler.runtime.serve.auth import (
        DEFAULT_LEEWAY_SECONDS,
        ResourceServer,
        ResourceServerSettings,
    )
    from compiler.runtime.serve.auth_keys import KeySetError

    profile_scopes: dict[str, set[str]] = {}
    for profile, scope in options.scopes:
        profile_scopes.setdefault(profile, set()).add(scope)
    assert options.issuer and options.public_url and options.jwks
    try:
        settings = ResourceServerSettings(
            public_url=options.public_url, issuer=options.issuer, jwks=options.jwks,
            profile_scopes={name: frozenset(scopes) for name, scopes in profile_scopes.items()},
            user_claim=options.user_claim or "sub", group_claim=options.group_claim,
            leeway_seconds=(DEFAULT_LEEWAY_SECONDS if options.leeway_seconds is None
                            else options.leeway_seconds))
        return ResourceServer(settings)
    except (ValueError, KeySetError) as error:
        raise UsageError(f"OAuth resource server: {error}") from None
