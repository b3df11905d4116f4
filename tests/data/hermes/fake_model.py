"""A fake model server for `generate.py`: the OpenAI chat-completions API on 127.0.0.1.

It answers as the real API does (JSON, or server-sent events when the request streams, usage
in the last chunk), from a script the generator sets before each turn (`Turn`): a user
message asking to read a file gets a `read_file` tool call, a tool result or any other
message gets the turn's reply, and a request without tools (the compressor's summary call,
or a title) gets a numbered summary. `Turn.pressure` makes the tool call report a prompt near
the context window, which is what makes Hermes compact. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CONTEXT = 200_000
CALM = {"prompt_tokens": 1_000, "completion_tokens": 20, "total_tokens": 1_020}
PRESSED = {"prompt_tokens": 190_000, "completion_tokens": 20, "total_tokens": 190_020}


@dataclass
class Turn:
    """What the model says in the next turn."""

    reply: str
    read: str | None = None  # a file to read first (a read_file tool call)
    pressure: bool = False  # the tool call reports a prompt near the window: compact
    call_id: str = ""


class FakeModel:
    def __init__(self) -> None:
        self.turn = Turn("")
        self.summaries = 0
        self.requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        if not body.get("tools"):
            prompt = json.dumps(messages)
            if "title" in prompt.lower() and "summar" not in prompt.lower():
                return {"content": "A session title", "usage": CALM}
            self.summaries += 1
            text = (
                f"## Goal\nSummary {self.summaries}: the user is tidying a project.\n"
                "## Progress\nSteps done."
            )
            return {"content": text, "usage": CALM}
        turn = self.turn
        if turn.read and last.get("role") == "user":
            arguments = json.dumps({"path": turn.read})
            call = {
                "id": turn.call_id,
                "type": "function",
                "function": {"name": "read_file", "arguments": arguments},
            }
            return {"tool_calls": [call], "usage": PRESSED if turn.pressure else CALM}
        return {"content": turn.reply, "usage": CALM}


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def do_GET(self) -> None:  # model listings: one model with its context window
            entry = {"id": "hermes-test", "object": "model", "context_length": CONTEXT}
            self._send("application/json", json.dumps({"object": "list", "data": [entry]}))

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if "messages" not in body:  # a model probe (e.g. Ollama's /api/show)
                self._send("application/json", json.dumps({"context_length": CONTEXT}))
                return
            reply = model.answer(body)
            if body.get("stream"):
                self._stream(body, reply)
            else:
                self._send("application/json", json.dumps(_completion(body, reply)))

        def _send(self, kind: str, text: str) -> None:
            raw = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(body, reply):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


def _completion(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if reply.get("tool_calls"):
        message["tool_calls"] = reply["tool_calls"]
    choice = {"index": 0, "message": message, "finish_reason": _finish(reply)}
    return {**_envelope(body, "chat.completion"), "choices": [choice], "usage": reply["usage"]}


def _chunks(body: dict[str, Any], reply: dict[str, Any]) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    text = reply.get("content") or ""
    if text:
        middle = len(text) // 2
        deltas += [{"content": text[:middle]}, {"content": text[middle:]}]
    for index, call in enumerate(reply.get("tool_calls") or []):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function"}
        deltas.append({"tool_calls": [{**head, "function": {"name": function["name"]}}]})
        deltas.append({"tool_calls": [{"index": index, "function": {"arguments": ""}}]})
        arguments = {"index": index, "function": {"arguments": function["arguments"]}}
        deltas.append({"tool_calls": [arguments]})
    envelope = _envelope(body, "chat.completion.chunk")
    chunks = [{**envelope, "choices": [{"index": 0, "delta": d}]} for d in deltas]
    chunks.append(
        {**envelope, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(reply)}]}
    )
    chunks.append({**envelope, "choices": [], "usage": reply["usage"]})
    return chunks


def _envelope(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": kind,
        "created": int(time.time()),
        "model": body.get("model"),
    }


def _finish(reply: dict[str, Any]) -> str:
    return "tool_calls" if reply.get("tool_calls") else "stop"
