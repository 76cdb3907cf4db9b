"""What the model reads when an api call fails: an error status, an egress failure.

Each text says what happened and what the model can do, names only the origin of the
endpoint (a path or query may carry settings) and carries a masked excerpt at most.
"""

from __future__ import annotations

from compiler.runtime.api.retry import RetryOutcome, retry_after
from compiler.runtime.egress.call import HttpResponse, OutgoingRequest
from compiler.runtime.egress.egress_errors import (
    EgressError,
    EgressRefused,
    EgressTimeout,
    ResponseTooLarge,
)
from compiler.runtime.placeholders import Redactor
from compiler.runtime.redaction import CutText, masked_cut

ERROR_EXCERPT_CHARACTERS = 300
STATUS_HINTS = {
    400: "the API rejected the arguments; check them against the tool description",
    401: "the API refused the credentials; the user may need to update their settings",
    403: "the API refused access; the user may need to update their settings or permissions",
    404: "the resource was not found; check the identifiers you passed",
    409: "the request conflicts with the resource's current state",
    422: "the API rejected the arguments; check them against the tool description",
    429: "the API is rate limiting; wait before trying again",
}


def status_error(
    redactor: Redactor, request: OutgoingRequest, outcome: RetryOutcome[HttpResponse],
    body: CutText,
) -> str:
    """What the model reads of a reply with an error status: status, hint, masked excerpt."""
    response = outcome.response
    status = response.status_code
    hint = STATUS_HINTS.get(status)
    if hint is None:
        hint = "the service failed; try again later" if status >= 500 else "check the arguments"
    asked = retry_after(response.headers)
    if outcome.gave_up is not None:
        hint += f"; {outcome.gave_up}"
    elif asked is not None:
        hint += f"; it asked to wait {asked:g} s"
    if outcome.attempts > 1:
        hint += f"; {outcome.attempts} attempts"
    # The body is masked already; joining its words may bring a secret's pieces together.
    excerpt = masked_cut(redactor, " ".join(body.text.split()), ERROR_EXCERPT_CHARACTERS,
                         arrived_cut=body.cut).text
    suffix = f": {excerpt}" if excerpt else ""
    return f"Error: HTTP {status} from {request.method} {origin_text(request.url)} ({hint}){suffix}"


def describe_failure(error: EgressError) -> str:
    """The model-facing text of an egress failure, with what the model can do about it."""
    if isinstance(error, ResponseTooLarge):
        return f"{error}; ask for less (a smaller limit, a narrower query or fewer fields)"
    if isinstance(error, EgressTimeout):
        return f"{error}; try again later or ask for less"
    if isinstance(error, EgressRefused):
        return f"{error}; this endpoint cannot be reached from here"
    return str(error)


def origin_text(url: str) -> str:
    """Scheme and host of ``url`` only: a path or query may carry secrets from settings."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host}"
