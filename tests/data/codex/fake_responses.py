"""A fake OpenAI Responses API on 127.0.0.1 for `generate.py`: it streams scripted answers as
the real API does (server-sent events) and records what every request carried.

Codex says what a request is for in its `x-codex-turn-metadata` header (`request_kind`:
`turn` or `compaction`). A turn is answered with the next scripted `Reply`. A compaction is
answered by the server's `compaction` mode: `"summary"` (a local compaction: Codex asked for a
summary in a normal request, answered with an assistant message), `"fail"` (HTTP 400
`context_length_exceeded`, as the API answers an input too long for the model) or, whatever the
mode, a remote compaction (the built-in provider's request ends with a `compaction_trigger`
item) is answered with one opaque, "encrypted" `compaction` item. The WebSocket transport the
built-in provider tries first gets a 404, after which Codex falls back to HTTPS.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Item = dict[str, Any]

CONTEXT_LENGTH_EXCEEDED = {
    "error": {
        "message": "Your input exceeds the context window of this model. "
        "Please adjust your input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
}


@dataclass
class Reply:
    """The answer to one turn request: its output items and the input tokens it reports.
    `overflow`: answer HTTP 400 `context_length_exceeded` instead."""

    items: list[Item] = field(default_factory=list)
    input_tokens: int = 100
    overflow: bool = False


@dataclass
class Request:
    """What one request carried and how it was answered."""

    turn: int  # which `codex exec` made it (0, 1, …)
    kind: str  # "turn" or "compaction"
    status: int
    input: list[Item]
    output: list[Item]
    usage: dict[str, int] | None  # the usage it reported (none for an error)


class FakeResponses:
    """The server, in a background thread: `with FakeResponses() as api: api.url …`."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.compaction = "summary"
        self.requests: list[Request] = []
        self.summaries: list[str] = []
        self.unexpected = 0  # turn requests that came with no reply scripted
        self.turn = 0  # the `codex exec` running
        self._count = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> FakeResponses:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self._count += 1
            return f"{prefix}_{self._count:04d}"

    def answer(self, kind: str, body: dict[str, Any]) -> tuple[int, Any]:
        """(HTTP status, SSE events or an error body) for one request, recorded."""
        items = list(body.get("input") or [])
        remote = bool(items) and items[-1].get("type") == "compaction_trigger"
        if kind == "compaction" and remote:
            output = [
                {
                    "type": "compaction",
                    "id": self.next_id("cmp"),
                    "encrypted_content": f"gAAAAA-opaque-{self.next_id('blob')}",
                }
            ]
            reply = Reply(output)
        elif kind == "compaction" and self.compaction == "fail":
            reply = Reply(overflow=True)
        elif kind == "compaction":
            summary = f"Summary {len(self.summaries) + 1}: the user is checking a project."
            self.summaries.append(summary)
            reply = Reply([message("assistant", summary, self.next_id("msg"))])
        else:
            if not self.replies:
                self.unexpected += 1
                return 500, {"error": {"message": "no reply scripted", "type": "server_error"}}
            reply = self.replies.popleft()
        usage = None if reply.overflow else _usage(reply.input_tokens)
        with self._lock:
            self.requests.append(
                Request(self.turn, kind, 200 if usage else 400, items, reply.items, usage)
            )
        if usage is None:
            return 400, CONTEXT_LENGTH_EXCEEDED
        return 200, sse_events(self.next_id("resp"), reply.items, usage)


def message(role: str, text: str, item_id: str) -> Item:
    kind = "output_text" if role == "assistant" else "input_text"
    part: Item = {"type": kind, "text": text}
    if role == "assistant":
        part["annotations"] = []
    return {
        "type": "message",
        "id": item_id,
        "role": role,
        "status": "completed",
        "content": [part],
    }


def _usage(input_tokens: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": 12, "total_tokens": input_tokens + 12}


def sse_events(response_id: str, items: list[Item], usage: dict[str, int]) -> list[Item]:
    """The events the Responses API streams for a reply: created, each item added, its text
    as deltas, done, then completed with the usage."""
    events: list[Item] = [{"type": "response.created", "response": {"id": response_id}}]
    for index, item in enumerate(items):
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress"},
            }
        )
        for part_index, part in enumerate(item.get("content") or []):
            for word in re.split(r"(?<= )", part.get("text", "")):  # deltas add up to it
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": part_index,
                        "delta": word,
                    }
                )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    wire = {
        **usage,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    events.append(
        {
            "type": "response.completed",
            "response": {"id": response_id, "status": "completed", "usage": wire},
        }
    )
    return events


def _handler(api: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:  # the WebSocket handshake: not served
            self._send(404, "application/json", b"{}")

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            metadata = json.loads(self.headers.get("x-codex-turn-metadata") or "{}")
            status, answer = api.answer(metadata.get("request_kind", "turn"), body)
            if status != 200:
                self._send(status, "application/json", json.dumps(answer).encode())
                return
            stream = "".join(
                f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in answer
            )
            self._send(200, "text/event-stream", stream.encode())

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
