"""A TCP proxy in front of the server that can lose an answer: it passes a request on, lets the service
carry it out, and closes the client's connection instead of passing the answer back. Also servers that
accept and never answer, or answer too slowly."""

import socket
import threading
import time
from typing import Callable, List, Optional, Tuple


def _read_message(sock: socket.socket) -> bytes:
    """One HTTP/1.1 message (head and Content-Length body) from a socket; what came before EOF otherwise."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head + b"\r\n\r\n" + rest


class _Server:
    """A listening socket on a free port of 127.0.0.1 that hands each connection to ``_handle`` in a thread."""

    def __init__(self) -> None:
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle_and_close, args=(client,), daemon=True).start()

    def _handle_and_close(self, client: socket.socket) -> None:
        with client:
            request = _read_message(client)
            if request:
                self._handle(client, request)

    def _handle(self, client: socket.socket, request: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._stop.set()
        self._server.close()


class LosingProxy(_Server):
    """Forwards each request to ``upstream`` (host, port) on its own connection; the first ``lose`` answers
    are dropped after the service has sent them, and ``after_loss`` (if given) runs before the client's
    connection is closed. ``requests`` holds every request head that went through, ``bodies`` their bodies."""

    def __init__(self, upstream: Tuple[str, int], lose: int = 1, after_loss: Optional[Callable[[], object]] = None) -> None:
        self._upstream = upstream
        self._lose = lose
        self._after_loss = after_loss
        self.requests: List[bytes] = []
        self.bodies: List[bytes] = []
        super().__init__()

    def _handle(self, client: socket.socket, request: bytes) -> None:
        head, _, body = request.partition(b"\r\n\r\n")
        self.requests.append(head)
        self.bodies.append(body)
        with socket.create_connection(self._upstream) as upstream:
            upstream.sendall(request)
            answer = _read_message(upstream)
        if self._lose > 0:
            self._lose -= 1
            if self._after_loss is not None:
                self._after_loss()
            return  # the service answered; the client never hears it
        client.sendall(answer)


class IdleClosingProxy(LosingProxy):
    """Passes one answer per connection, as kept alive, then closes the connection as the next request arrives
    without answering it: a service's idle timeout that strikes just as a kept connection is used again.
    ``dropped`` holds the heads of the requests it closed on."""

    def __init__(self, upstream: Tuple[str, int]) -> None:
        self.dropped: List[bytes] = []
        super().__init__(upstream, lose=0)

    def _handle(self, client: socket.socket, request: bytes) -> None:
        super()._handle(client, request)
        try:
            following = client.recv(65536)
        except OSError:
            return
        if following:
            self.dropped.append(following.partition(b"\r\n\r\n")[0])


class SilentServer(_Server):
    """Reads the request, then says nothing (``drip`` > 0: sends one byte of an answer every ``drip`` seconds)."""

    def __init__(self, drip: float = 0.0) -> None:
        self._drip = drip
        super().__init__()

    def _handle(self, client: socket.socket, request: bytes) -> None:
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        sent = 0
        while not self._stop.wait(self._drip or 0.5):
            if self._drip and sent < len(answer):
                try:
                    client.sendall(answer[sent : sent + 1])
                except OSError:
                    return
                sent += 1


class PlainTextServer(_Server):
    """Answers every request with a 502 whose body is not JSON, as a proxy in the way might."""

    def _handle(self, client: socket.socket, request: bytes) -> None:
        body = b"<html><body>Bad gateway</body></html>"
        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def closed_port_url() -> str:
    """The URL of a port where nothing listens (it was free a moment ago)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    time.sleep(0.01)
    return f"http://127.0.0.1:{port}"
