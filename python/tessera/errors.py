"""The exceptions the client raises.

Every error the server answers becomes an :class:`ApiError` (a subclass per
status the API documents) carrying the server's own message, as the CLI
prints it; a server that does not answer is :class:`Unreachable`.
"""

from __future__ import annotations

from typing import Mapping, Optional


class TesseraError(Exception):
    """The base of every error this package raises."""


class ConfigError(TesseraError, ValueError):
    """The client's configuration is unusable: a malformed server address, an unreadable token file."""


class Unreachable(TesseraError, OSError):
    """No answer came from the server: connection refused, a TLS handshake that failed, a timeout."""


class WaitTimeout(TesseraError, TimeoutError):
    """`Client.wait` or a followed log ran past its timeout; the job is still running."""

    def __init__(self, message: str, job: Optional[dict] = None):
        super().__init__(message)
        self.job = job  # the job as last read, when there is one


class WatchReset(TesseraError):
    """The events after `since` can no longer be delivered: they left the
    server's event window (410), or the server restarted and handed their
    revisions out again. List again, then watch from the list's revision."""

    def __init__(self, message: str, since: int, revision: Optional[int] = None):
        super().__init__(message)
        self.since = since
        self.revision = revision


class ApiError(TesseraError):
    """The server answered an error. `status` is the HTTP status, `message`
    the server's error text exactly as it sent it (`{"error": ..., "code": ...}`)."""

    def __init__(self, status: int, message: str, *, method: str = "", path: str = "",
                 headers: Optional[Mapping[str, str]] = None, source: Optional[str] = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        self.headers = dict(headers or {})
        # What a submission's body was, for positions the server gives as
        # "body:LINE:COL" (as the CLI shows them): a file's path shows them
        # against the file; "" (a dict the client serialised) drops them;
        # None (text the caller wrote) keeps them as the server sent them.
        self.source = source

    @property
    def retry_after(self) -> Optional[float]:
        """Seconds the server asked the caller to wait (429, 503), when it said."""
        return parse_retry_after(self.headers.get("retry-after"))

    def __str__(self) -> str:
        if self.source is None or not self.message.startswith("body:"):
            return self.message
        if self.source:
            return self.source + self.message[len("body"):]
        reason = self.message.find(": ")
        return self.message[reason + 2:] if reason >= 0 else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, message={self.message!r})"


class BadRequest(ApiError):
    """400: malformed JSON or YAML, an unknown field, a wrong type or value, a bad query parameter."""


class Unauthorized(ApiError):
    """401: no token, or one that is malformed, unknown, revoked or expired."""


class Forbidden(ApiError):
    """403: the caller's role may not use the route, or this job or queue."""


class NotFound(ApiError):
    """404: no such job (or one forgotten after its retention), task, node or queue."""


class Conflict(ApiError):
    """409: a conflict with the current state, e.g. cancelling a job that already ended."""


class Gone(ApiError):
    """410: a watch from a revision that has left the event window."""


class TooLarge(ApiError):
    """413: the request body exceeds 1 MiB."""


class Infeasible(ApiError):
    """422: well formed but impossible: a job that can never run here, a queue that does not exist."""


class RateLimited(ApiError):
    """429: over the token's request rate or the user's limit of waiting jobs, for longer than the client retries."""


class Unavailable(ApiError):
    """503: no replica leads (or it is recovering), for longer than the client retries."""


class ServerError(ApiError):
    """Another 5xx: the server failed."""


_BY_STATUS = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    413: TooLarge,
    422: Infeasible,
    429: RateLimited,
    503: Unavailable,
}


def error_for(status: int, message: str, **kwargs) -> ApiError:
    """The exception for an error answer of this status."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ApiError
    return cls(status, message, **kwargs)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds; the server sends whole seconds. None when absent or unreadable."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
