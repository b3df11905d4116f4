"""A TCP proxy in front of a PostgreSQL server that counts the client's round trips.

Each client message is read by its frame (a type byte, then a length): a simple query
(`Q`), the Sync (`S`) that ends an extended-protocol exchange, or the Flush (`H`) with which
a client in pipeline mode asks for the results it waits for (unless it follows a Sync: one
wait) is one round trip. The
proxy declines SSL and GSS encryption itself (the client, at `sslmode=prefer`, goes on in
the clear), so every frame can be read; the server sees an ordinary plaintext client.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import BinaryIO

from transcripts.application.storage import StoreConfig

ENCRYPTION_REQUESTS = frozenset({80877103, 80877104})  # SSLRequest, GSSENCRequest
ROUND_TRIP_ENDS = frozenset(b"QS")
SYNC, FLUSH = b"S"[0], b"H"[0]


class RoundTripCounter:
    """Listens on a free local port; forwards each connection to the server of `url`."""

    def __init__(self, url: str) -> None:
        location = StoreConfig.from_url(url).location
        assert location is not None, url
        self._server = (location.host, location.port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        self.url = url.replace(f"{location.host}:{location.port}", f"127.0.0.1:{port}", 1)
        assert self.url != url, url
        self._count = 0
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def round_trips(self) -> int:
        with self._lock:
            return self._count

    @contextmanager
    def counting(self) -> Iterator[list[int]]:
        """The round trips made inside the block, in a one-item list filled on exit."""
        before = self.round_trips
        made: list[int] = []
        yield made
        made.append(self.round_trips - before)

    def close(self) -> None:
        for sock in [self._listener, *self._sockets]:
            sock.close()

    def __enter__(self) -> RoundTripCounter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self._server)
            self._sockets += [client, server]
            threading.Thread(
                target=self._client_to_server, args=(client, server), daemon=True
            ).start()
            threading.Thread(target=_copy, args=(server, client), daemon=True).start()

    def _client_to_server(self, client: socket.socket, server: socket.socket) -> None:
        reader = client.makefile("rb")
        try:
            startup = _startup(reader, client)
            server.sendall(startup)
            previous = 0
            while frame := _frame(reader):
                if frame[0] in ROUND_TRIP_ENDS or (frame[0] == FLUSH and previous != SYNC):
                    with self._lock:
                        self._count += 1
                previous = frame[0]
                server.sendall(frame)
        except OSError:
            pass
        finally:
            server.close()


def _startup(reader: BinaryIO, client: socket.socket) -> bytes:
    """The client's startup message, after declining any request to encrypt."""
    while True:
        head = _exactly(reader, 8)
        length, code = struct.unpack("!ii", head)
        if code not in ENCRYPTION_REQUESTS:
            return head + _exactly(reader, length - 8)
        client.sendall(b"N")


def _frame(reader: BinaryIO) -> bytes:
    """One typed client message, whole; empty once the client has gone."""
    head = reader.read(5)
    if len(head) < 5:
        return b""
    (length,) = struct.unpack("!i", head[1:])
    return head + _exactly(reader, length - 4)


def _exactly(reader: BinaryIO, size: int) -> bytes:
    data = reader.read(size)
    if len(data) != size:
        raise OSError("the client went away mid-message")
    return data


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        target.close()
