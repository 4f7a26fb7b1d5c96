"""HTTP with the service over the standard library's http.client: kept-alive connections, one exchange with
a deadline for the whole of it (connection, request, answer), and its failures as the client's exceptions."""

import http.client
import json
import selectors
import socket
import ssl
import threading
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import SplitResult

from .errors import MemoryApiError, MemoryConnectionError, MemoryForbiddenError, MemoryTimeoutError, MemoryVersionConflictError


class Connections:
    """The connections of one client to its service: kept alive between calls, so that a call does not pay
    for a new TCP (and TLS) connection. A call takes one for itself and gives it back once it has read a
    whole answer that does not close it; at most ``keep`` idle ones are kept. Safe to share between threads."""

    def __init__(self, url: SplitResult, timeout: float, keep: int = 4) -> None:
        self._url = url
        self._timeout = timeout
        self._keep = keep
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def take(self) -> http.client.HTTPConnection:
        """An idle connection the service has not closed meanwhile, else a new one (not yet connected)."""
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                break
            if _still_open(connection):
                return connection
            connection.close()
        return self.new()

    def new(self) -> http.client.HTTPConnection:
        """A new connection (not yet connected)."""
        if self._url.scheme == "https":
            return http.client.HTTPSConnection(self._url.hostname or "", self._url.port, timeout=self._timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(self._url.hostname or "", self._url.port, timeout=self._timeout)

    def give(self, connection: http.client.HTTPConnection) -> None:
        """Keeps a connection whose last answer was read whole, for the next call."""
        with self._lock:
            if len(self._idle) < self._keep:
                self._idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        """Closes the idle connections (calls under way keep theirs until they end)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _still_open(connection: http.client.HTTPConnection) -> bool:
    """Whether an idle connection can carry a request: a socket with something to read while idle has been
    closed by the service (its keep-alive timeout, say), or holds bytes nobody asked for."""
    sock = connection.sock
    if sock is None:
        return False
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_READ)
            return not selector.select(0)
    except (OSError, ValueError):
        return False


def exchange(
    connections: Connections,
    method: str,
    target: str,
    headers: Dict[str, str],
    body: Optional[bytes],
    timeout: float,
    repeatable: bool = True,
) -> Any:
    """Sends one request and answers its JSON body, or raises: MemoryApiError (MemoryForbiddenError for a
    403, MemoryVersionConflictError for a 412) for an error status, MemoryTimeoutError when the whole exchange took longer than ``timeout``
    seconds, MemoryConnectionError when the connection failed (``sent`` False when it was refused).

    A kept-alive connection that the service closed just as the request went out (its idle timeout, say)
    fails before any answer arrives. A ``repeatable`` request (a read, or a write with an idempotency key)
    is then sent once more on a new connection, within the same deadline; this is not one of the client's
    retries, since the service never answered."""
    where = f"{method} {target}"
    deadline = time.monotonic() + timeout
    connection = connections.take()
    try:
        status, answer_headers, text = _exchange_on(connections, connection, method, target, headers, body, timeout, timeout, where)
    except _ClosedWhileIdle as closed:
        if not repeatable:
            raise MemoryConnectionError(f"{where}: {closed.reason}", sent=True) from closed.__cause__
        fresh = connections.new()
        left = max(0.0, deadline - time.monotonic())
        status, answer_headers, text = _exchange_on(connections, fresh, method, target, headers, body, left, timeout, where)
    return _answer(where, status, answer_headers, text)


class _ClosedWhileIdle(Exception):
    """A kept-alive connection failed before any byte of the answer: the service had closed it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _exchange_on(
    connections: Connections,
    connection: http.client.HTTPConnection,
    method: str,
    target: str,
    headers: Dict[str, str],
    body: Optional[bytes],
    seconds: float,
    timeout: float,
    where: str,
) -> Tuple[int, http.client.HTTPMessage, bytes]:
    """One request and its whole answer on ``connection`` within ``seconds`` (what is left of the call's
    ``timeout``); the connection goes back to ``connections`` if it stays open."""
    reused = connection.sock is not None
    # A socket timeout bounds each wait for bytes, not the whole answer (a server that sends a byte a second
    # would never time out), so a timer shuts the connection down when the deadline passes: whatever read is
    # under way then ends, and the exchange fails as a timeout.
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    sent = False
    answered = False
    keep = False
    try:
        timer.start()
        if connection.sock is None:
            connection.connect()
        sent = True
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        answered = True
        status, answer_headers, text = response.status, response.headers, response.read()
        if expired.is_set():
            raise socket.timeout("deadline passed")
        keep = not response.will_close
    except ConnectionRefusedError as error:
        raise MemoryConnectionError(f"{where}: connection refused by {connection.host}:{connection.port}", sent=False) from error
    except socket.gaierror as error:
        raise MemoryConnectionError(f"{where}: cannot resolve {connection.host}: {error}", sent=False) from error
    except (OSError, http.client.HTTPException) as error:
        if expired.is_set() or isinstance(error, (socket.timeout, TimeoutError)):
            raise MemoryTimeoutError(f"{where}: no complete answer within {timeout:g} s") from error
        # RemoteDisconnected is a ConnectionResetError: no status line came.
        if reused and not answered and isinstance(error, (ConnectionResetError, BrokenPipeError)):
            raise _ClosedWhileIdle(f"{type(error).__name__}: {error}") from error
        raise MemoryConnectionError(f"{where}: {type(error).__name__}: {error}", sent=sent) from error
    finally:
        timer.cancel()
        if keep:
            connections.give(connection)
        else:
            connection.close()
    return status, answer_headers, text


def _answer(where: str, status: int, headers: http.client.HTTPMessage, text: bytes) -> Any:
    try:
        value = json.loads(text.decode("utf-8")) if text else None
    except (UnicodeDecodeError, ValueError):
        raise MemoryApiError(status, "invalid_response", f"{where} answered {status} with a body that is not JSON") from None
    if 200 <= status < 300:
        return value
    code, message, retry_after, request_id = _error_fields(value, headers)
    if code is None:
        raise MemoryApiError(status, "invalid_response", f"{where} answered {status} without an error code", retry_after, request_id)
    error_class = {403: MemoryForbiddenError, 412: MemoryVersionConflictError}.get(status, MemoryApiError)
    raise error_class(status, code, message, retry_after, request_id)


def _error_fields(value: Any, headers: http.client.HTTPMessage) -> Tuple[Optional[str], str, Optional[float], Optional[str]]:
    """The API's error body (``error``, ``message``, ``retry_after``, ``request_id``), with the ``Retry-After``
    and request id headers where the body has none."""
    body = value if isinstance(value, dict) else {}
    code = body.get("error") if isinstance(body.get("error"), str) else None
    message = body.get("message") if isinstance(body.get("message"), str) else ""
    retry_after: Optional[float] = None
    if isinstance(body.get("retry_after"), (int, float)):
        retry_after = float(body["retry_after"])
    else:
        try:
            retry_after = float(headers.get("Retry-After", ""))
        except ValueError:
            retry_after = None
    request_id = body.get("request_id") if isinstance(body.get("request_id"), str) else None
    request_id = request_id or headers.get("X-Request-Id") or headers.get("x-amzn-RequestId")
    return code, message, retry_after, request_id
