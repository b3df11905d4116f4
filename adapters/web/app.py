"""The web app: a read-only Starlette application over one store.

Every page is rendered on the server and works without JavaScript. Requests other than GET
and HEAD are refused before they reach a route; every response carries a
Content-Security-Policy that allows scripts and styles from the app's own `/static/` only
(nothing inline, nothing from elsewhere). An unknown session, version, message or attempt is
a 404 page, an erased session a 410, anything else that fails a 500 page of one line — the
traceback goes to the server's log, never to the page.

Ids may hold any text, `/` included, so routes match the path as the client sent it, still
percent-encoded (`RawPath`), and each id is decoded once (`links.decoded`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ... import SessionErasedError, SessionNotFoundError, TranscriptError, TranscriptStore
from .compaction import compaction_page
from .links import ServerLinks, decoded
from .pages import (
    NotFound,
    event_page,
    history_page,
    message_page,
    replay_page,
    session_page,
    sessions_page,
)
from .rendering import STATIC, render

LOG = logging.getLogger("transcripts.web")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]


class BadRequest(TranscriptError):
    """A query value that is not what the page takes (a version that is no number)."""


def create_app(store: TranscriptStore, *, allowed_hosts: list[str] | None = None) -> ASGIApp:
    """The app over `store` (the caller opens and closes it). `allowed_hosts`: the Host
    header values served (default: the loopback names, so that a web page elsewhere cannot
    reach the store by rebinding its own name to 127.0.0.1); `["*"]` serves any."""
    links = ServerLinks()

    def html(template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        content = render(template, links=links, store_name=store.config.url, **values)
        return HTMLResponse(content, status_code=status_code)

    def error(status: int, title: str, message: str) -> Response:
        try:
            return html("error.html", status, status=status, title=title, message=message)
        except Exception:  # the page itself failed: one line of text
            LOG.exception("the error page failed")
            return PlainTextResponse(f"{title}: {message}", status_code=status)

    def sid(request: Request, name: str = "session_id") -> str:
        try:
            return decoded(request.path_params[name])
        except UnicodeDecodeError:
            raise NotFound("that id is not UTF-8 text") from None

    def sessions(request: Request) -> Response:
        return html("sessions.html", view=sessions_page(store, **_list_query(request)))

    def session(request: Request) -> Response:
        after = _number(request, "after", 0)
        return html("session.html", view=session_page(store, sid(request), after=after))

    def event(request: Request) -> Response:
        version = _path_number(request, "version")
        return html("event.html", view=event_page(store, sid(request), version))

    def replay(request: Request) -> Response:
        version, number = _number(request, "version", None), _number(request, "page", 1)
        return html("replay.html", view=replay_page(store, sid(request), version, page=number))

    def message(request: Request) -> Response:
        view = message_page(store, sid(request), sid(request, "message_id"))
        return html("message.html", view=view)

    def compaction(request: Request) -> Response:
        view = compaction_page(store, sid(request), sid(request, "compaction_id"))
        return html("compaction.html", view=view)

    def history(request: Request) -> Response:
        number = _number(request, "page", 1)
        return html("history.html", view=history_page(store, sid(request), page=number))

    routes = [
        Route("/", sessions),
        Route("/sessions/{session_id}", session),
        Route("/sessions/{session_id}/events/{version}", event),
        Route("/sessions/{session_id}/replay", replay),
        Route("/sessions/{session_id}/messages/{message_id}", message),
        Route("/sessions/{session_id}/compactions/{compaction_id}", compaction),
        Route("/sessions/{session_id}/history", history),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def not_found(_request: Request, failure: Exception) -> Response:
        return error(404, "Not found", str(failure))

    async def erased(_request: Request, failure: Exception) -> Response:
        return error(410, "Erased", str(failure))

    async def bad_request(_request: Request, failure: Exception) -> Response:
        return error(400, "Bad request", str(failure))

    async def http_error(_request: Request, failure: Exception) -> Response:
        assert isinstance(failure, HTTPException)
        titles = {404: "Not found", 405: "Method not allowed"}
        text = "no such page" if failure.status_code == 404 else str(failure.detail)
        return error(failure.status_code, titles.get(failure.status_code, "Error"), text)

    async def store_error(_request: Request, failure: Exception) -> Response:
        LOG.warning("store error: %s", failure)
        return error(500, "The store could not answer", _one_line(str(failure)))

    async def crash(_request: Request, failure: Exception) -> Response:
        # Starlette raises it again once this page is sent: the traceback goes to the log.
        return error(500, "Internal error", f"{type(failure).__name__} (see the server's log)")

    def refusal() -> Response:
        return error(405, "Method not allowed", "this server only reads: GET and HEAD")

    hosts = LOOPBACK_NAMES if allowed_hosts is None else allowed_hosts
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(OnlyReads, refusal=refusal),
            Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
            Middleware(RawPath),
        ],
        exception_handlers={
            NotFound: not_found,
            SessionNotFoundError: not_found,
            SessionErasedError: erased,
            BadRequest: bad_request,
            HTTPException: http_error,
            TranscriptError: store_error,
            Exception: crash,
        },
    )
    return SecurityHeaders(app)  # outside Starlette's own error handling: on every response


def _list_query(request: Request) -> dict[str, Any]:
    query = request.query_params
    return {
        "source": query.get("source", ""),
        "sort": query.get("sort", ""),
        "query": query.get("q", ""),
        "page": _number(request, "page", 1),
    }


def _number(request: Request, name: str, default: int | None) -> Any:
    value = request.query_params.get(name)
    if value is None or value == "":
        if default is None:
            raise BadRequest(f"give the {name} (a number)")
        return default
    if not value.isascii() or not value.isdigit():
        raise BadRequest(f"{name} must be a number, not {value!r}")
    return int(value)


def _path_number(request: Request, name: str) -> int:
    value = request.path_params[name]
    if not value.isascii() or not value.isdigit():
        raise NotFound(f"no {name} {value!r}")
    return int(value)


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


class RawPath:
    """Routes see the path as sent, still percent-encoded: an id holding `/` stays one
    segment (the server decodes `%2F` in `path`; `raw_path` keeps it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("raw_path"):
            scope = {**scope, "path": scope["raw_path"].decode("latin-1")}
        await self.app(scope, receive, send)


class OnlyReads:
    """GET and HEAD only: any other method is a 405 page before it reaches a route."""

    def __init__(self, app: ASGIApp, refusal: Callable[[], Response]) -> None:
        self.app = app
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in {"GET", "HEAD"}:
            response = self.refusal()
            response.headers["allow"] = "GET, HEAD"
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """The Content-Security-Policy and its companions on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)
