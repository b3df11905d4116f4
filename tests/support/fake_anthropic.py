"""A fake Anthropic Messages API on 127.0.0.1 for `generate.py` and the SDK tests: it
streams scripted answers as the real API does (server-sent events) and records what every
request carried.

Requests are told apart by what they carry: a summary request (its last user message asks
for a summary of the conversation: a compaction) is answered by the server's `compaction`
mode, `"summary"` (an assistant message `<summary>…</summary>`) or `"fail"` (HTTP 400, as
the API answers a prompt too long); a request offering the `Bash` tool is a turn of the
agent (or of a subagent) and gets the next scripted `Reply`; anything else (the CLI's own
side requests: a title, a quota check) gets a short text and is recorded as `side`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]

PROMPT_TOO_LONG = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum",
    },
}
SUMMARY_MARKERS = ("your task is to create a detailed summary of the conversation",)


@dataclass
class Reply:
    """The answer to one turn request: its content blocks and the input tokens it reports."""

    blocks: list[Block] = field(default_factory=list)
    input_tokens: int = 100


@dataclass
class Request:
    """What one request carried and how it was answered."""

    turn: int  # which `claude -p` made it (0, 1, …)
    kind: str  # "turn", "compaction" or "side"
    status: int
    system: Any
    messages: list[dict[str, Any]]
    output: list[Block]
    usage: dict[str, int] | None


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str, arguments: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


class FakeAnthropic:
    """The server, in a background thread: `with FakeAnthropic() as api: api.url …`."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.compaction = "summary"
        self.requests: list[Request] = []
        self.summaries: list[str] = []
        self.unexpected = 0
        self.turn = 0
        self._count = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self._count += 1
            return f"{prefix}_{self._count:04d}"

    def answer(
        self, body: dict[str, Any]
    ) -> tuple[int, list[Block] | dict[str, Any], dict[str, int]]:
        """(HTTP status, the content blocks or an error body, usage) for one request."""
        kind = kind_of(body)
        with self._lock:
            if kind == "compaction" and self.compaction == "fail":
                reply: Reply | None = None
            elif kind == "compaction":
                summary = f"Summary {len(self.summaries) + 1}: the user is checking notes.txt."
                self.summaries.append(summary)
                reply = Reply(
                    [text(f"<analysis>Checked.</analysis>\n<summary>{summary}</summary>")]
                )
            elif kind == "turn":
                if not self.replies:
                    self.unexpected += 1
                    reply = Reply([text("(no reply scripted)")])
                else:
                    reply = self.replies.popleft()
            else:
                reply = Reply([text("ok")], input_tokens=10)
            usage = (
                None if reply is None else {"input_tokens": reply.input_tokens, "output_tokens": 12}
            )
            self.requests.append(
                Request(
                    self.turn,
                    kind,
                    200 if reply else 400,
                    body.get("system"),
                    body.get("messages") or [],
                    reply.blocks if reply else [],
                    usage,
                )
            )
        if reply is None or usage is None:
            return 400, PROMPT_TOO_LONG, {}
        return 200, reply.blocks, usage


def kind_of(body: dict[str, Any]) -> str:
    for message in body.get("messages") or []:
        words = json.dumps(message.get("content", "")).lower()
        if message.get("role") == "user" and any(marker in words for marker in SUMMARY_MARKERS):
            return "compaction"
    tools = [tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)]
    return "turn" if "Bash" in tools else "side"


def sse_events(
    message_id: str, model: str, blocks: list[Block], usage: dict[str, int]
) -> list[Block]:
    """The events the Messages API streams for a reply."""
    events: list[Block] = [
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
            },
        }
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            {"type": "content_block_start", "index": index, "content_block": start},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
        {"type": "message_stop"},
    ]
    return events


def _handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:
            self._send(404, "application/json", b"{}")

        def do_HEAD(self) -> None:
            self._send(200, "application/json", b"")

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            if self.path.split("?")[0].endswith("/count_tokens"):
                self._send(200, "application/json", b'{"input_tokens": 100}')
                return
            if not self.path.split("?")[0].endswith("/v1/messages"):
                self._send(404, "application/json", b"{}")
                return
            status, answer, usage = api.answer(body)
            if status != 200:
                self._send(status, "application/json", json.dumps(answer).encode())
                return
            assert isinstance(answer, list)
            message_id = api.next_id("msg")
            model = body.get("model", "claude-test")
            if not body.get("stream"):
                stop = "tool_use" if any(b["type"] == "tool_use" for b in answer) else "end_turn"
                payload = {
                    "id": message_id, "type": "message", "role": "assistant", "model": model,
                    "content": answer, "stop_reason": stop, "stop_sequence": None, "usage": usage,
                }  # fmt: skip
                self._send(200, "application/json", json.dumps(payload).encode())
                return
            stream = "".join(
                f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                for event in sse_events(message_id, model, answer, usage)
            )
            self._send(200, "text/event-stream", stream.encode())

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            if status != 200:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(payload)

    return Handler
