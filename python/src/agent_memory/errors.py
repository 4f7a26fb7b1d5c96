"""The exceptions of the client: one base class, and one class for each way a call can fail."""

from typing import Optional

__all__ = [
    "AgentMemoryError",
    "MemoryApiError",
    "MemoryForbiddenError",
    "MemoryVersionConflictError",
    "MemoryTimeoutError",
    "MemoryConnectionError",
]


class AgentMemoryError(Exception):
    """Every error the client raises. (Not named ``MemoryError``: that is a Python built-in.)"""


class MemoryApiError(AgentMemoryError):
    """The service answered with an error status: ``status``, the API's ``code`` and ``message``, and
    ``retry_after`` (seconds, on a 429 or 503) and ``request_id`` (to quote in a report) where it gave them."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        retry_after: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.request_id = request_id


class MemoryForbiddenError(MemoryApiError):
    """A 403 ``forbidden``: the key is valid but may not do this (a missing scope, or another agent than the
    one the key is bound to). The message names which."""


class MemoryVersionConflictError(MemoryApiError):
    """A 412 ``version_conflict``: an update with ``if_version`` found the record at another version, because
    something changed it since it was read. Nothing changed. Read the record again (``get``), decide, and
    update with its new version. It is never retried."""


class MemoryTimeoutError(AgentMemoryError, TimeoutError):
    """No answer in time: the connection or a read of the answer took longer than the client's ``timeout``."""


class MemoryConnectionError(AgentMemoryError, ConnectionError):
    """The service could not be reached, or the connection broke before its answer was read. ``sent`` says
    whether the request may have reached the service (False: it was refused before anything was sent)."""

    def __init__(self, message: str, sent: bool = True) -> None:
        super().__init__(message)
        self.sent = sent
