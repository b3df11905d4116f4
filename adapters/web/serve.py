"""`transcripts serve`: the web app on uvicorn, bound where asked (127.0.0.1 by default)."""

from __future__ import annotations

import ipaddress
import socket
import threading
import webbrowser
from collections.abc import Callable

import uvicorn

from ... import TranscriptStore
from .app import LOOPBACK_NAMES, create_app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host` and `port` (0: any free port), listening."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(
    store: TranscriptStore,
    sock: socket.socket,
    *,
    open_browser: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve `store` on `sock` until interrupted (Ctrl-C, SIGTERM). Requests whose Host is
    not a loopback name are refused unless the socket is bound elsewhere than loopback."""
    url = url_of(sock)
    host = sock.getsockname()[0]
    hosts = LOOPBACK_NAMES if is_loopback(host) else ["*"]
    config = uvicorn.Config(
        create_app(store, allowed_hosts=hosts),
        log_level="warning",
        access_log=False,
        server_header=False,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(url)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, [url]).start()
    server.run(sockets=[sock])
