"""A TCP proxy in front of the server that can lose an answer: it passes a request on, lets the service
carry it out, and closes the client's connection instead of passing the answer back. Also servers that
accept and never answer, or answer too slowly."""

import socket
import threading
import time
from typing import List, Tuple


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


def _listener() -> Tuple[socket.socket, str]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    return server, f"http://127.0.0.1:{server.getsockname()[1]}"


class LosingProxy:
    """Forwards each request to ``upstream`` (host, port) on its own connection; the first ``lose`` answers
    are dropped after the service has sent them. ``requests`` holds every request head that went through."""

    def __init__(self, upstream: Tuple[str, int], lose: int = 1) -> None:
        self._upstream = upstream
        self._lose = lose
        self.requests: List[bytes] = []
        self._server, self.url = _listener()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        with client:
            request = _read_message(client)
            if not request:
                return
            self.requests.append(request.partition(b"\r\n\r\n")[0])
            with socket.create_connection(self._upstream) as upstream:
                upstream.sendall(request)
                answer = _read_message(upstream)
            if self._lose > 0:
                self._lose -= 1
                return  # the service answered; the client never hears it
            client.sendall(answer)

    def close(self) -> None:
        self._server.close()


class SilentServer:
    """Accepts connections and reads the request; then says nothing (``drip`` > 0: sends one byte of an
    answer every ``drip`` seconds, forever)."""

    def __init__(self, drip: float = 0.0) -> None:
        self._drip = drip
        self._server, self.url = _listener()
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._hold, args=(client,), daemon=True).start()

    def _hold(self, client: socket.socket) -> None:
        with client:
            _read_message(client)
            answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            sent = 0
            while not self._stop.wait(self._drip or 0.5):
                if self._drip and sent < len(answer):
                    try:
                        client.sendall(answer[sent : sent + 1])
                    except OSError:
                        return
                    sent += 1

    def close(self) -> None:
        self._stop.set()
        self._server.close()


class PlainTextServer:
    """Answers every request with a 502 whose body is not JSON, as a proxy in the way might."""

    def __init__(self) -> None:
        self._server, self.url = _listener()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with client:
                _read_message(client)
                body = b"<html><body>Bad gateway</body></html>"
                client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        self._server.close()


def closed_port_url() -> str:
    """The URL of a port where nothing listens (it was free a moment ago)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    time.sleep(0.01)
    return f"http://127.0.0.1:{port}"
