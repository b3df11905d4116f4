"""Write Hermes `state.db` files with the real Hermes code, and the truth about every row.

Run by hand, in a venv of its own with one Hermes release installed (see README.md here):

    python3 -m venv /tmp/hermes-0.19.0
    /tmp/hermes-0.19.0/bin/pip install hermes-agent==0.19.0
    /tmp/hermes-0.19.0/bin/python tests/data/hermes/generate.py tests/data/hermes

It writes `<out>/<version>/state.db` and `<out>/<version>/truth.json`. The tests only read
those files; they never import this script.

What runs is Hermes' own code: `AIAgent` (its per-turn flush `_persist_session`, its
`_compress_context` with the real `ContextCompressor`, in place or by rotation), `SessionDB`
(`archive_and_compact`, `rewind_to_message`, titles), and the gateway's `SessionStore`
(the first turn's `session_meta` row). Nothing talks to a model or the network: the agent's
client points at an unused loopback port, and the one call that would reach a model, the
compressor's summary (`agent.context_compressor.call_llm`), is replaced by one that returns a
fixed text. The conversation itself (user messages, assistant replies, tool calls and results)
is written by this script into the agent's message list, as the agent's loop would. A failed
commit is `archive_and_compact` raising "database is locked", as in Hermes' own regression
test for hermes-agent#99477; the compressor is made to compress small conversations by
setting its token budgets (`tail_token_budget`, `protect_first_n`), nothing else.

The truth is recorded while writing: every message dict carries a `_truth` key (Hermes
neither stores nor strips it; its copies keep it), so each new row is known to be a real
message written for the first time, a copy of one, or a compaction summary; the script also
keeps what the active context should be (the real messages live in Hermes' rows, once each,
without uncommitted summaries) and every compaction attempt: committed or failed, what it
kept, and what it would have superseded.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from importlib.metadata import version as installed_version
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HOME = Path(tempfile.mkdtemp(prefix="hermes-home-"))
os.environ["HERMES_HOME"] = str(HOME)
for key in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "HERMES_SESSION_SOURCE"):
    os.environ.pop(key, None)

import agent.context_compressor as compressor_module  # noqa: E402
from hermes_state import SCHEMA_VERSION, SessionDB  # noqa: E402
from run_agent import AIAgent  # noqa: E402

UNUSED_PORT = "http://127.0.0.1:9/v1"  # the discard port: nothing listens, nothing is sent
MODEL = "nous/hermes-test"
SYSTEM = "You are Hermes, a careful assistant."


class Summaries:
    """Stands in for the summary model: a fixed, numbered text per call."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.count += 1
        text = (
            f"## Goal\nSummary {self.count}: the user is tidying a project.\n"
            "## Progress\nSteps done."
        )
        message = SimpleNamespace(content=text, tool_calls=None, reasoning=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])


SUMMARIES = Summaries()
compressor_module.call_llm = SUMMARIES


class Truth:
    """What the rows are, recorded while Hermes writes them."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.rows: dict[int, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.seen: set[tuple[str, str]] = set()

    def session(self, session_id: str) -> dict[str, Any]:
        return self.sessions.setdefault(
            session_id, {"history": [], "active": [], "attempts": [], "rewinds": []}
        )

    def query(self, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db_path) as connection:
            return connection.execute(sql, parameters).fetchall()

    def last_row(self) -> int:
        return self.query("SELECT coalesce(max(id), 0) FROM messages")[0][0]

    def new_rows(self, after: int) -> list[tuple[int, str]]:
        return self.query("SELECT id, session_id FROM messages WHERE id > ? ORDER BY id", after)

    def wrote(self, rows: list[tuple[int, str]], dicts: list[dict[str, Any]], how: str) -> None:
        """`rows` hold `dicts`, in order."""
        assert len(rows) == len(dicts), (how, rows, len(dicts))
        stored = dict(
            self.query(
                f"SELECT id, role FROM messages WHERE id IN ({','.join('?' * len(rows))})",
                *[row for row, _ in rows],
            )
        )
        assert [stored[row] for row, _ in rows] == [m.get("role") for m in dicts], (how, rows)
        for (row, session_id), message in zip(rows, dicts, strict=True):
            state = self.session(session_id)
            entry: dict[str, Any] = {"session": session_id, "write": how}
            truth = message.get("_truth")
            if message.get("role") == "session_meta":
                entry["session_meta"] = True
            if "_summary" in message:  # (summary id, "committed", "failed" or "handoff")
                summary, summary_is = message["_summary"]
                entry["summary"] = summary
                entry["summary_is"] = summary_is
                if summary_is != "failed":
                    state["history"].append(summary)
                    if summary_is == "handoff":
                        state["active"].append(summary)
                if truth is not None:
                    entry["merged_into"] = truth  # the summary merged into this tail message
            if truth is not None:
                entry["message"] = truth
                entry["copy"] = (session_id, truth) in self.seen
                if not entry["copy"]:
                    self.seen.add((session_id, truth))
                    state["history"].append(truth)
                    state["active"].append(truth)
            self.rows[row] = entry

    def dump(self, path: Path, scenarios: dict[str, str]) -> None:
        columns = ("source", "model", "parent_session_id", "title", "end_reason")
        for session_id, *values in self.query(f"SELECT id, {', '.join(columns)} FROM sessions"):
            self.session(session_id).update(zip(columns, values, strict=True))
        data = {
            "hermes_version": installed_version("hermes-agent"),
            "schema_version": SCHEMA_VERSION,
            "scenarios": scenarios,
            "sessions": self.sessions,
            "rows": {str(row): entry for row, entry in sorted(self.rows.items())},
        }
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def unflushed(
    messages: list[dict[str, Any]],
    history: list[dict[str, Any]] | None,
    skip: set[int] = frozenset(),
) -> list[dict[str, Any]]:
    """The dicts the agent's flush will write: not marked persisted, not in the history, not
    written already (`skip`: ids of dicts a rotation stored in the child)."""
    known = {id(item) for item in history or []} | skip
    return [m for m in messages if not m.get("_db_persisted") and id(m) not in known]


class Conversation:
    """One Hermes session driven turn by turn, the way the agent's loop drives it."""

    def __init__(
        self,
        truth: Truth,
        db: SessionDB,
        session_id: str,
        platform: str,
        *,
        in_place: bool = True,
        head: int = 3,
    ) -> None:
        self.truth, self.db, self.session_id = truth, db, session_id
        self.agent = AIAgent(
            base_url=UNUSED_PORT,
            api_key="unused",
            model=MODEL,
            quiet_mode=True,
            session_db=db,
            platform=platform,
            skip_context_files=True,
            skip_memory=True,
            enabled_toolsets=[],
            session_id=session_id,
        )
        self.agent.compression_in_place = in_place
        compressor = self.agent.context_compressor
        compressor.tail_token_budget = 60  # small conversations still have a middle to compress
        compressor.protect_first_n = head
        compressor.protect_last_n = 3
        if hasattr(compressor, "abort_on_summary_failure"):
            compressor.abort_on_summary_failure = False
        self.history: list[dict[str, Any]] = []
        self.skip: set[int] = set()
        self.count = 0

    @property
    def state(self) -> dict[str, Any]:
        return self.truth.session(self.session_id)

    def say(self, role: str, content: str | None, **fields: Any) -> dict[str, Any]:
        """A new message dict carrying its truth id."""
        self.count += 1
        return {
            "role": role,
            "content": content,
            **fields,
            "_truth": f"{self.session_id}/m{self.count}",
        }

    def resume(self) -> None:
        """A new process: a new agent loads the session's live rows (with their timestamps)."""
        loaded = self.db.get_messages_as_conversation(self.session_id)
        rows = self.truth.query(
            "SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id",
            self.session_id,
        )
        for (row,), message in zip(rows, loaded, strict=True):
            entry = self.truth.rows[row]
            message["_truth"] = entry.get("message") or entry.get("summary")
        count = self.count
        self.__init__(
            self.truth,
            self.db,
            self.session_id,
            self.agent.platform,
            in_place=self.agent.compression_in_place,
            head=3,
        )
        self.history, self.count = loaded, count

    def turn(
        self, user: dict[str, Any], replies: list[dict[str, Any]], compact: str | None = None
    ) -> None:
        """The user's message, an optional preflight compaction ("commit", "fail", "rotate"),
        then the replies; the agent flushes after the user's message and after each reply."""
        messages = list(self.history)
        history: list[dict[str, Any]] | None = self.history
        messages.append(user)
        if compact is not None:
            messages, history = self.compact(messages, history, compact)
        self.flush(messages, history)
        for reply in replies:
            messages.append(reply)
            self.flush(messages, history)
        self.history = messages

    def flush(self, messages: list[dict[str, Any]], history: list[dict[str, Any]] | None) -> None:
        pending = unflushed(messages, history, self.skip)
        before = self.truth.last_row()
        self.agent._persist_session(messages, history)
        rows = self.truth.new_rows(before)
        if len(rows) != len(pending):  # releases that flush from a positional cursor
            pending = messages[len(messages) - len(rows) :] if rows else []
        self.truth.wrote(rows, pending, "flush")

    def compact(
        self, messages: list[dict[str, Any]], history: list[dict[str, Any]] | None, how: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        agent, db, parent = self.agent, self.db, self.session_id
        snapshot = list(self.state["active"])
        pending = unflushed(messages, history)
        summary = f"{parent}/summary{len(self.state['attempts']) + 1}"
        real_archive = getattr(db, "archive_and_compact", None)
        if how == "fail":

            def locked(*_: Any, **__: Any) -> int:
                raise sqlite3.OperationalError("database is locked")

            db.archive_and_compact = locked
        before = self.truth.last_row()
        kwargs: dict[str, Any] = {"approx_tokens": 100_000}
        if "force" in inspect.signature(agent._compress_context).parameters:
            kwargs["force"] = True
        try:
            compressed, _ = agent._compress_context(messages, SYSTEM, **kwargs)
        finally:
            if how == "fail":
                db.archive_and_compact = real_archive
        assert compressed is not messages, "the compressor did not compress"
        kind = {"commit": "committed", "fail": "failed", "rotate": "handoff"}[how]
        for message in compressed:  # the summary: new, or merged into a tail message
            text = message.get("content")
            if "_truth" not in message or str(text).startswith("[PRIOR CONTEXT"):
                message["_summary"] = (summary, kind)
        merged = [m.get("_truth") for m in compressed if "_summary" in m]
        kept = [m["_truth"] for m in compressed if m.get("_truth") in snapshot]
        self.state["attempts"].append(
            {
                "kind": how,
                "summary": summary,
                "merged_into": merged[0] if merged else None,
                "snapshot": snapshot,
                "kept": kept,
                "superseded": [m for m in snapshot if m not in kept],
                "error": "database is locked" if how == "fail" else None,
            }
        )
        rows = self.truth.new_rows(before)
        if how == "commit":
            self.truth.wrote(rows, compressed, "archive_and_compact")
            order = [m.get("_truth") or summary for m in compressed]
            if merged and merged[0]:
                order.insert(order.index(merged[0]), summary)
            self.state["active"][:] = list(dict.fromkeys(order))
            return compressed, list(compressed)  # conversation_history_after_compression
        if how == "fail":
            assert rows == [], rows
            return compressed, None
        old = [r for r in rows if r[1] == parent]  # the rotation's flush to the parent
        self.truth.wrote(old, pending[: len(old)], "flush")
        self.session_id = agent.session_id
        self.state["parent"] = parent
        self.state["handoff"] = summary
        child = [r for r in rows if r[1] != parent]  # replace_messages, where Hermes does it
        self.truth.wrote(child, compressed[: len(child)], "replace_messages")
        self.skip = {id(m) for m in compressed[: len(child)]}
        return compressed, None

    def rewind(self, back: int) -> None:
        """/undo: Hermes rewinds to the `back`-th last live user row."""
        rows = self.truth.query(
            "SELECT id FROM messages WHERE session_id = ? AND role = 'user' AND active = 1 "
            "ORDER BY id DESC",
            self.session_id,
        )
        target = rows[back - 1][0]
        live = {
            row
            for (row,) in self.truth.query(
                "SELECT id FROM messages WHERE session_id = ? AND active = 1", self.session_id
            )
        }
        self.db.rewind_to_message(self.session_id, target)
        undone = sorted(row for row in live if row >= target)
        gone = {self.truth.rows[row].get("message") for row in undone}
        self.state["active"][:] = [m for m in self.state["active"] if m not in gone]
        self.state["rewinds"].append(undone)
        self.history = [m for m in self.history if m.get("_truth") not in gone]


def call(conversation: Conversation, n: int, path: str) -> list[dict[str, Any]]:
    """An assistant message calling read_file, and the tool's result."""
    call_id = f"call_{conversation.session_id[-4:]}_{n}"
    arguments = json.dumps({"path": path})
    tool_calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": "read_file", "arguments": arguments},
        }
    ]
    return [
        conversation.say(
            "assistant",
            "",
            tool_calls=tool_calls,
            finish_reason="tool_calls",
            reasoning=f"I should read {path} first.",
        ),
        conversation.say(
            "tool", f"contents of {path}: 12 lines", tool_call_id=call_id, tool_name="read_file"
        ),
    ]


def chat(
    conversation: Conversation, n: int, *, compact: str | None = None, tools: bool = False
) -> None:
    """A turn: the user asks, the assistant may read a file, then answers."""
    c = conversation
    user = c.say("user", f"Step {n}: please tidy module_{n}.")
    replies = call(c, n, f"src/module_{n}.py") if tools else []
    replies.append(
        c.say("assistant", f"Done with step {n}: module_{n} is tidy now.", finish_reason="stop")
    )
    c.turn(user, replies, compact=compact)


def scenarios(truth: Truth, db: SessionDB) -> dict[str, str]:
    """Every scenario this release can write, each in its own session; what each holds."""
    done: dict[str, str] = {}
    in_place = hasattr(db, "archive_and_compact")

    c = Conversation(truth, db, "20260101_090000_plain1", "cli")
    chat(c, 1, tools=True)
    c.turn(c.say("user", "ok"), [c.say("assistant", "ok", finish_reason="stop")])
    c.turn(c.say("user", "ok"), [c.say("assistant", "Anything else?", finish_reason="stop")])
    c.turn(
        c.say("user", "Read module_1 again please."),
        [  # the same tool output again
            *call(c, 1, "src/module_1.py"),
            c.say("assistant", "Same as before.", finish_reason="stop"),
        ],
    )
    db.set_session_title(c.session_id, "Tidy the project")
    done[c.session_id] = (
        "plain: tool calls, reasoning, a repeated 'ok', the same tool output twice, a title"
    )

    c = Conversation(truth, db, "20260101_100000_gatew1", "telegram")
    gateway_meta(c)
    for n in range(1, 4):
        chat(c, n)
    done[c.session_id] = "gateway: the first turn's session_meta row, then turns"

    c = Conversation(truth, db, "20260101_110000_rotat1", "discord", in_place=False)
    for n in range(1, 7):
        chat(c, n, tools=n % 2 == 0)
    db.set_session_title(c.session_id, "Rotating work")
    parent = c.session_id
    chat(c, 7, compact="rotate")
    for n in range(8, 10):
        chat(c, n)
    done[parent] = "rotation (compression_in_place off): the parent session"
    done[c.session_id] = "rotation: the child session with its handoff"

    if hasattr(db, "rewind_to_message"):
        c = Conversation(truth, db, "20260101_120000_rewnd1", "cli")
        for n in range(1, 5):
            chat(c, n)
        c.rewind(2)
        for n in range(5, 7):
            chat(c, n)
        done[c.session_id] = "/undo: the last two turns rewound, then two more turns"

    if not in_place:
        return done

    c = Conversation(truth, db, "20260101_130000_commit", "cli")
    for n in range(1, 9):
        chat(c, n, tools=n % 3 == 0)
    chat(c, 9, compact="commit")
    for n in range(10, 15):
        chat(c, n)
    chat(c, 15, compact="commit")
    chat(c, 16)
    done[c.session_id] = "in place: two committed compactions (the second summarises the first)"

    c = Conversation(truth, db, "20260101_140000_merged", "cli", head=2)
    for n in range(1, 7):
        chat(c, n)
    chat(c, 7, compact="commit")
    chat(c, 8)
    done[c.session_id] = "in place: a committed compaction whose summary merges into the tail"

    c = Conversation(truth, db, "20260101_150000_failed", "telegram")
    for n in range(1, 9):
        chat(c, n)
    for n in range(9, 19):
        chat(c, n, compact="fail")
    done[c.session_id] = "in place: ten commits failing with 'database is locked' (#99477)"

    c = Conversation(truth, db, "20260101_160000_fthenc", "cli")
    for n in range(1, 9):
        chat(c, n, tools=n == 4)
    chat(c, 9, compact="fail")
    for n in range(10, 13):
        chat(c, n)
    chat(c, 13, compact="commit")
    chat(c, 14)
    done[c.session_id] = "in place: a failed commit, then one that commits and archives its rows"

    c = Conversation(truth, db, "20260101_170000_resume", "cli")
    for n in range(1, 9):
        chat(c, n)
    chat(c, 9, compact="commit")
    chat(c, 10)
    c.resume()
    for n in range(11, 14):
        chat(c, n)
    for n in range(14, 17):
        chat(c, n, compact="fail")
    chat(c, 17)
    done[c.session_id] = "in place: committed, resumed from the database, then three failed commits"
    return done


def gateway_meta(c: Conversation) -> None:
    """The gateway's first-turn `session_meta` row, written through its SessionStore."""
    from gateway.config import GatewayConfig
    from gateway.session import SessionStore

    c.agent._ensure_db_session()
    store = SessionStore(HOME / "sessions", GatewayConfig())
    store._db = c.db
    meta = {
        "role": "session_meta",
        "tools": [],
        "model": MODEL,
        "platform": "telegram",
        "timestamp": 1_800_000_000.0,
    }
    before = c.truth.last_row()
    store.append_to_transcript(c.session_id, meta)
    c.truth.wrote(c.truth.new_rows(before), [meta], "gateway")


def main(out: Path) -> None:
    release = installed_version("hermes-agent")
    db_path = HOME / "state.db"
    db = SessionDB(db_path=db_path)
    truth = Truth(db_path)
    done = scenarios(truth, db)
    db.close()
    target = out / release
    target.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db_path) as source, sqlite3.connect(target / "state.db.tmp") as copy:
        source.backup(copy)  # one file, no WAL beside it
    copy.close()
    os.replace(target / "state.db.tmp", target / "state.db")
    truth.dump(target / "truth.json", done)
    shutil.rmtree(HOME, ignore_errors=True)
    print(
        f"hermes-agent {release} (schema {SCHEMA_VERSION}): {len(done)} sessions, "
        f"{len(truth.rows)} rows -> {target}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
