"""The built-in OAuth 2.1 resource server of ``capc serve`` (SPEC §15, RFC 9728, RFC 6750).

Every request to an endpoint carries ``Authorization: Bearer <JWT>``. The token is checked
with the configured JWKS (asymmetric algorithms only, the algorithm bound to the key),
its issuer, its audience (the server's public URL, or the endpoint's own URL as an
RFC 8707 ``resource``), expiry and not-before with a small leeway; ``sub`` (or a
configured claim) becomes ``user_id``, a configured claim ``group_id``, and a profile may
require scopes. Refusals follow RFC 6750: 401 with ``WWW-Authenticate`` naming the
protected-resource metadata document (served here, per endpoint as MCP clients look for
it), 403 ``insufficient_scope``. No token or claim value reaches a log line, an error
text or a header: every refusal text is one of this module's fixed strings.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import jwt
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from compiler.runtime.serve.auth_keys import ASYMMETRIC_ALGORITHMS, KeySetError, KeySource
from compiler.runtime.serve.identity import Identity

LOG = logging.getLogger("capc.serve.auth")

MAX_TOKEN_BYTES = 16 * 1024
MAX_SCOPES = 256
MAX_ID_CHARS = 256
DEFAULT_LEEWAY_SECONDS = 30.0
METADATA_PATH = "/.well-known/oauth-protected-resource"

# An endpoint of capc serve, relative to where the app is mounted: /mcp or /mcp/{profile}.
_ENDPOINT = re.compile(r"/mcp(?:/(?P<profile>[A-Za-z0-9_.-]{1,128}))?/?")
_TOKEN = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# RFC 6749 §3.3 scope-token: printable ASCII without space, quote or backslash.
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")


class TokenRefused(Exception):
    """A token refused; ``reason`` is a fixed text that quotes nothing from the token."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class ResourceServerSettings:
    """How tokens are checked: one frozen value built from the CLI flags or a host app."""

    public_url: str
    issuer: str
    jwks: str
    profile_scopes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    user_claim: str = "sub"
    group_claim: str | None = None
    algorithms: frozenset[str] = ASYMMETRIC_ALGORITHMS
    leeway_seconds: float = DEFAULT_LEEWAY_SECONDS
    max_token_bytes: int = MAX_TOKEN_BYTES
    resource_name: str = "capc serve"

    def __post_init__(self) -> None:
        public = urlsplit(self.public_url)
        if public.scheme not in ("http", "https") or not public.hostname \
                or public.query or public.fragment:
            raise ValueError("the public URL must be an absolute http(s) URL without "
                             "query or fragment")
        object.__setattr__(self, "public_url", self.public_url.rstrip("/"))
        if not self.issuer:
            raise ValueError("the issuer must not be empty")
        refused = self.algorithms - ASYMMETRIC_ALGORITHMS
        if refused or not self.algorithms:
            raise ValueError("allowed algorithms are asymmetric only: "
                             + ", ".join(sorted(ASYMMETRIC_ALGORITHMS)))
        scopes = {profile: frozenset(required)
                  for profile, required in self.profile_scopes.items()}
        for required in scopes.values():
            for scope in required:
                if not SCOPE_TOKEN.fullmatch(scope):
                    raise ValueError("a scope is 1-128 printable characters without "
                                     "space, quote or backslash")
        object.__setattr__(self, "profile_scopes", MappingProxyType(scopes))

    def required_scopes(self, profile: str | None) -> frozenset[str]:
        """Scopes an endpoint needs; the whole manifest (``/mcp``) needs every one."""
        if profile is None:
            return frozenset().union(*self.profile_scopes.values())
        return self.profile_scopes.get(profile, frozenset())


def endpoint_of(request: Request) -> tuple[str, str | None] | None:
    """``(path, profile)`` of the served endpoint a request is for, relative to the mount."""
    path: str = request.scope.get("path", "")
    root: str = request.scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    match = _ENDPOINT.fullmatch(path)
    if match is None:
        return None
    profile = request.path_params.get("profile", match.group("profile"))
    return path.rstrip("/"), profile


def metadata_url_for(resource: str) -> str:
    """Where RFC 9728 §3.1 puts the metadata of ``resource``: well-known before its path."""
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"


def _quoted(value: str) -> str:
    # Every value put in a challenge is ours (URLs we built, configured scopes), but a
    # quote or backslash would still break the header: escape them as RFC 9110 says.
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _identifier(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TokenRefused("the token's identity claim is not a string or an integer")
    if isinstance(value, str) and not 0 < len(value) <= MAX_ID_CHARS:
        raise TokenRefused("the token's identity claim is empty or too long")
    return value


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """Granted scopes: the ``scope`` string (RFC 9068) or an ``scp`` list or string."""
    granted = claims.get("scope", claims.get("scp"))
    if granted is None:
        return frozenset()
    if isinstance(granted, str):
        if len(granted) > MAX_SCOPES * 129:
            raise TokenRefused("the token grants too many scopes")
        names: list[Any] = granted.split()
    elif isinstance(granted, list):
        names = granted
    else:
        raise TokenRefused("the token's scope claim is malformed")
    if len(names) > MAX_SCOPES or not all(isinstance(name, str) for name in names):
        raise TokenRefused("the token's scope claim is malformed")
    return frozenset(names)


class ResourceServer:
    """The ``Authenticator`` of the built-in OAuth 2.1 resource-server mode."""

    def __init__(self, settings: ResourceServerSettings,
                 keys: KeySource | None = None) -> None:
        self.settings = settings
        self.keys = keys if keys is not None else KeySource(settings.jwks, settings.algorithms)

    def __repr__(self) -> str:
        return f"ResourceServer(issuer={self.settings.issuer!r}, " \
               f"public_url={self.settings.public_url!r})"

    async def verify(self, token: str, endpoint_path: str) -> Identity:
        """The identity a bearer token names for this endpoint, or ``TokenRefused``."""
        settings = self.settings
        if len(token) > settings.max_token_bytes or not _TOKEN.fullmatch(token):
            raise TokenRefused("the bearer token is not a compact JWT of a bounded size")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused("the token's header cannot be read") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if not isinstance(algorithm, str) or algorithm not in settings.algorithms:
            raise TokenRefused("the token's algorithm is not allowed")
        if kid is not None and not isinstance(kid, str):
            raise TokenRefused("the token's key id is malformed")
        if "crit" in header:
            raise TokenRefused("the token has critical header parameters")
        key = (await self.keys.load()).find(kid, algorithm)
        if key is None:
            refreshed = await self.keys.refresh_for_unknown_key()
            key = refreshed.find(kid, algorithm) if refreshed is not None else None
        if key is None:
            raise TokenRefused("no configured key matches the token")
        required = ["exp", "iss", "aud"]
        if settings.user_claim == "sub":
            required.append("sub")
        try:
            claims = jwt.decode(
                token, key, algorithms=[algorithm], issuer=settings.issuer,
                audience=[settings.public_url, settings.public_url + endpoint_path],
                leeway=settings.leeway_seconds, options={"require": required})
        except jwt.ExpiredSignatureError:
            raise TokenRefused("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenRefused("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise TokenRefused("the token is not for this resource") from None
        except jwt.InvalidIssuerError:
            raise TokenRefused("the token is from another issuer") from None
        except jwt.InvalidSignatureError:
            raise TokenRefused("the token's signature does not verify") from None
        except jwt.PyJWTError:
            raise TokenRefused("the token is invalid") from None
        if settings.user_claim not in claims:
            raise TokenRefused("the token names no user")
        group = claims.get(settings.group_claim) if settings.group_claim else None
        return Identity(
            user_id=_identifier(claims[settings.user_claim]),
            group_id=None if group is None else _identifier(group),
            scopes=scopes_of(claims), claims=claims)

    async def authenticate(self, request: Request) -> Identity | Response:
        """Check the request's bearer token for the endpoint it addresses."""
        endpoint = endpoint_of(request)
        path, profile = endpoint if endpoint is not None else ("", None)
        resource = self.settings.public_url + path
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            LOG.info("serve auth: request without a bearer token refused")
            return self._challenge(401, resource, None, "a bearer token is required")
        try:
            identity = await self.verify(token.strip(), path)
        except TokenRefused as refusal:
            LOG.info("serve auth: token refused: %s", refusal.reason)
            return self._challenge(401, resource, "invalid_token", refusal.reason)
        except KeySetError as error:
            LOG.warning("serve auth: verification keys unavailable: %s", error)
            return JSONResponse(
                {"error": "temporarily_unavailable",
                 "error_description": "the verification keys cannot be read"},
                status_code=503, headers={"Retry-After": "30"})
        missing = self.settings.required_scopes(profile) - identity.scopes
        if endpoint is not None and missing:
            LOG.info("serve auth: token lacks a required scope")
            return self._challenge(403, resource, "insufficient_scope",
                                   "the token lacks a scope this endpoint requires",
                                   scope=" ".join(sorted(self.settings.required_scopes(
                                       profile))))
        return identity

    def _challenge(self, status: int, resource: str, error: str | None,
                   description: str, scope: str | None = None) -> Response:
        parts = []
        if error is not None:
            parts += [f"error={_quoted(error)}", f"error_description={_quoted(description)}"]
        if scope:
            parts.append(f"scope={_quoted(scope)}")
        parts.append(f"resource_metadata={_quoted(metadata_url_for(resource))}")
        body = {"error": error or "unauthorized", "error_description": description}
        return JSONResponse(body, status_code=status,
                            headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)})

    def metadata(self, resource_path: str, profile: str | None) -> dict[str, Any]:
        """The RFC 9728 document of the resource at ``public_url + resource_path``."""
        scopes = (self.settings.required_scopes(profile) if resource_path
                  else self.settings.required_scopes(None))
        return {
            "resource": self.settings.public_url + resource_path,
            "authorization_servers": [self.settings.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": sorted(scopes),
            "resource_name": self.settings.resource_name,
        }

    async def _metadata_endpoint(self, request: Request) -> Response:
        rest = "/" + request.path_params.get("rest", "") if "rest" in request.path_params \
            else ""
        base_path = urlsplit(self.settings.public_url).path
        if rest:
            if not rest.startswith(base_path + "/"):
                return JSONResponse({"error": "not_found"}, status_code=404)
            match = _ENDPOINT.fullmatch(rest[len(base_path):])
            if match is None:
                return JSONResponse({"error": "not_found"}, status_code=404)
            resource_path, profile = rest[len(base_path):].rstrip("/"), match.group("profile")
        else:
            resource_path, profile = "", None
        return JSONResponse(self.metadata(resource_path, profile), headers={
            "Cache-Control": "public, max-age=3600",
            "Access-Control-Allow-Origin": "*"})

    def metadata_routes(self) -> list[Route]:
        """The protected-resource metadata, at the root and per endpoint (RFC 9728 §3.1)."""
        return [
            Route(METADATA_PATH, self._metadata_endpoint, methods=["GET"]),
            Route(METADATA_PATH + "/{rest:path}", self._metadata_endpoint, methods=["GET"]),
        ]
