"""Write Hermes `state.db` files with the real Hermes code, and the truth about every row.

Run by hand, once per release, each in a venv of its own outside the repository (README.md
here has the loop over every release):

    python3 -m venv /work/scratch/hermes/v0.19.0
    /work/scratch/hermes/v0.19.0/bin/pip install hermes-agent==0.19.0
    /work/scratch/hermes/v0.19.0/bin/python tests/data/hermes/generate.py tests/data/hermes

It writes `<out>/<release>/state.db` and `<out>/<release>/truth.json`. The tests only read
those files; they never import this script.

What runs is Hermes' own code: every turn is `AIAgent.run_conversation` (its loop, its
flushes, the real `read_file` tool on files in a scratch folder, its compression with the
real `ContextCompressor`, in place or by rotation), talking to a fake model on 127.0.0.1
(`fake_model.py`) whose reported usage makes Hermes compact; `/undo` is the CLI's own
`HermesCLI.undo_last`; the gateway's `SessionStore` writes its `session_meta` row. A failed
commit is `archive_and_compact` raising "database is locked", as in Hermes' own regression
test for hermes-agent#99477. The compressor's budgets are set small (`tail_token_budget`,
`protect_first_n`, `protect_last_n`, as a user's config may) so short conversations have a
middle to compress. `truth.py` records what every row is while Hermes writes it. Hermes' own
prompt text (the system prompt, the compressor's instructions opening each summary) is
replaced by placeholders in the file written, and its full-text index is dropped.
"""

from __future__ import annotations

import atexit
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
atexit.register(shutil.rmtree, HOME, ignore_errors=True)  # after Hermes' own exit handlers
os.environ["HERMES_HOME"] = str(HOME)
for key in ("OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "NOUS_API_KEY", "HERMES_SESSION_SOURCE"):
    os.environ.pop(key, None)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_model import FakeModel, Turn  # noqa: E402

MODEL = FakeModel()
os.environ["OPENAI_BASE_URL"] = MODEL.url  # the custom endpoint: the agent's and the compressor's
os.environ["OPENAI_API_KEY"] = "unused"
(HOME / "config.yaml").write_text(
    f"model:\n  provider: custom\n  base_url: {MODEL.url}\n  default: hermes-test\n"
)

from hermes_state import SCHEMA_VERSION, SessionDB  # noqa: E402
from run_agent import AIAgent  # noqa: E402
from truth import Truth  # noqa: E402

PROMPT_PLACEHOLDER = "[Hermes' system prompt, replaced by the generator]"
# Hermes' summary rows open with its compressor's instructions (SUMMARY_PREFIX): its own
# marker is kept, the rest replaced.
SUMMARY_PLACEHOLDER = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] [Hermes' summary instructions, replaced by the "
    "generator]"
)
FILES = HOME / "project"


class Conversation:
    """One Hermes conversation, driven turn by turn as the CLI (or gateway) drives it."""

    def __init__(
        self,
        truth: Truth,
        db: SessionDB,
        session_id: str,
        platform: str,
        *,
        head: int = 3,
    ) -> None:
        self.truth, self.db, self.platform = truth, db, platform
        self.head = head  # 3: the summary merges into the tail here; 2: it stands alone
        self.history: list[dict[str, Any]] = []
        self.steps = 0
        self.agent = self._agent(session_id)

    def _agent(self, session_id: str) -> AIAgent:
        agent = AIAgent(
            base_url=MODEL.url,
            api_key="unused",
            model="hermes-test",
            quiet_mode=True,
            session_db=self.db,
            platform=self.platform,
            skip_context_files=True,
            skip_memory=True,
            enabled_toolsets=["file"],
            session_id=session_id,
        )
        compressor = agent.context_compressor
        compressor.tail_token_budget = 60
        compressor.protect_first_n = self.head
        compressor.protect_last_n = 3
        return agent

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    def say(self, text: str, reply: str, *, read: str | None = None, compact: str = "") -> None:
        """One turn: the user's `text`; the model reads `read` first if given; `compact`
        ("commit", "fail", "rotate") makes that tool call report a full context."""
        assert not compact or read, "Hermes compacts after a tool call here"
        self.steps += 1
        MODEL.turn = Turn(reply, read=read, pressure=bool(compact), call_id=self._call_id())
        self.agent.compression_in_place = compact in ("commit", "fail")  # else a rotation
        self.truth.fail_next_commit = compact == "fail"
        before = self.attempts()
        result = self.agent.run_conversation(text, conversation_history=self.history)
        self.history = result["messages"]
        made = self.attempts() - before
        assert made == (1 if compact else 0), (
            f"{self.session_id} step {self.steps}: {made} attempts"
        )
        assert not self.truth.fail_next_commit, "the failing commit was never tried"

    def attempts(self) -> int:
        return sum(len(state["attempts"]) for state in self.truth.sessions.values())

    def _call_id(self) -> str:
        return f"call_{self.session_id[-6:]}_{self.steps}"

    def step(self, n: int, *, read: bool = False, compact: str = "") -> None:
        path = FILES / f"module_{n % 7}.py" if read or compact else None
        self.say(
            f"Step {n}: please tidy module_{n}.",
            f"Done with step {n}: module_{n} is tidy now.",
            read=str(path) if path else None,
            compact=compact,
        )

    def resume(self) -> None:
        """A new process: a new agent loads the session's live rows from the database."""
        loaded = self.db.get_messages_as_conversation(self.session_id)
        rows = self.truth.live_rows(self.session_id)
        assert len(rows) == len(loaded), (len(rows), len(loaded))
        for row, message in zip(rows, loaded, strict=True):
            entry = self.truth.rows[row]
            if "message" in entry:
                message["_truth"] = entry["message"]
            if "summary" in entry:
                message["_summary"] = (entry["summary"], entry["summary_is"])
        self.agent = self._agent(self.session_id)
        self.history = loaded

    def undo(self, turns: int = 1) -> None:
        """The CLI's /undo, run by its own code on this conversation."""
        from cli import HermesCLI

        cli = SimpleNamespace(
            conversation_history=self.history,
            _session_db=self.db,
            session_id=self.session_id,
            agent=self.agent,
            _undo_content_to_text=HermesCLI._undo_content_to_text,
        )
        HermesCLI.undo_last(cli, turns, prefill=False)
        self.history = cli.conversation_history


def plain(c: Conversation) -> str:
    c.step(1, read=True)
    c.say("ok", "ok")
    c.say("ok", "Anything else?")
    c.say("Read module_1 again please.", "Same as before.", read=str(FILES / "module_1.py"))
    c.db.set_session_title(c.session_id, "Tidy the project")
    return "plain: tool calls, a repeated 'ok', the same tool output twice, a title"


def gateway(c: Conversation) -> str:
    from gateway.config import GatewayConfig
    from gateway.session import SessionStore

    c.agent._ensure_db_session()
    store = SessionStore(HOME / "sessions", GatewayConfig())
    store._db = c.db
    meta = {"role": "session_meta", "tools": [], "model": "hermes-test", "platform": "telegram"}
    before = c.truth.last_row()
    store.append_to_transcript(c.session_id, meta)
    c.truth.wrote(c.truth.new_rows(before), [meta], "gateway")
    for n in range(1, 4):
        c.step(n)
    return "gateway: the first turn's session_meta row, then turns"


def chain(c: Conversation, in_place: bool) -> dict[str, str]:
    """parent -> child -> grandchild by rotation; the child fails a commit where it can."""
    done: dict[str, str] = {}
    for n in range(1, 7):
        c.step(n, read=n % 2 == 0)
    c.db.set_session_title(c.session_id, "Rotating work")
    done[c.session_id] = "rotation chain: the parent"
    c.step(7, compact="rotate")
    for n in range(8, 12):
        c.step(n)
    if in_place:
        c.step(12, compact="fail")
        for n in range(13, 16):
            c.step(n)
        done[c.session_id] = "rotation chain: the child, with a failed commit"
    else:
        done[c.session_id] = "rotation chain: the child"
    c.step(16, compact="rotate")
    c.step(17)
    done[c.session_id] = "rotation chain: the grandchild"
    return done


def commit_fail_commit(c: Conversation) -> str:
    n = 0
    for plan in ["", "", "", "", "commit", "", "", "", "fail", "", "", "", "fail", "", "", "",
                 "fail", "", "", "", "commit", ""]:  # fmt: skip
        n += 1
        c.step(n, read=n % 5 == 0, compact=plan)
    return "a commit, three failed commits, a commit"


def fail_then_commit(c: Conversation) -> str:
    for n in range(1, 6):
        c.step(n)
    c.step(6, compact="fail")  # the session's first compaction: its summary stands alone
    for n in range(7, 11):
        c.step(n)
    c.step(11, compact="commit")
    c.step(12)
    return "a failed commit, then a commit that archives its rows"


def resumed(c: Conversation) -> str:
    n = 0
    for plan in ["", "", "", "", "commit", "", "", "", "fail", "", "resume", "", "", "fail", "",
                 "resume", "", "", "fail", "", "", "", "commit", ""]:  # fmt: skip
        if plan == "resume":
            c.resume()
            continue
        n += 1
        c.step(n, compact=plan)
    return "a commit, failed commits with resumes from the database between them, a commit"


def undone(c: Conversation, in_place: bool) -> str:
    for n in range(1, 5):
        c.step(n)
    c.undo()
    for n in range(5, 7):
        c.step(n)
    if not in_place:
        return "/undo: the last turn undone, then two more turns"
    c.step(7, compact="commit")
    c.step(8)
    c.undo()
    for n in range(9, 12):
        c.step(n)
    c.step(12, compact="fail")
    c.undo()  # right after the failure: its copies are the rows undone
    c.step(13)
    c.step(14)
    c.step(15, compact="fail")
    c.step(16)
    c.undo()
    c.step(17)
    c.step(18)
    c.step(19, compact="commit")
    c.step(20)
    return "/undo between commits and failures, and right after a failure"


def long_session(c: Conversation, in_place: bool) -> dict[str, str]:
    """300 turns, a compaction every 40; every third one fails (in place)."""
    done: dict[str, str] = {}
    for n in range(1, 301):
        compact = ""
        if n % 40 == 0:
            compact = "rotate" if not in_place else ("fail" if n % 120 == 80 else "commit")
        if compact == "rotate":
            done[c.session_id] = "300 turns, a rotation every 40: one link of the chain"
        c.step(n, compact=compact)
    done[c.session_id] = (
        "300 turns, a compaction every 40, failures among them"
        if in_place
        else "300 turns, a rotation every 40: the chain's last link"
    )
    return done


def scenarios(truth: Truth, db: SessionDB) -> dict[str, str]:
    """Every scenario this release can write; what each session holds."""
    in_place = hasattr(db, "archive_and_compact")
    undo = hasattr(db, "rewind_to_message")
    done: dict[str, str] = {}
    c = Conversation(truth, db, "20260101_090000_plain1", "cli")
    done[c.session_id] = plain(c)
    c = Conversation(truth, db, "20260101_100000_gatew1", "telegram")
    done[c.session_id] = gateway(c)
    c = Conversation(truth, db, "20260101_110000_rotat1", "discord", head=2)
    done.update(chain(c, in_place))
    if undo:
        c = Conversation(truth, db, "20260101_120000_rewnd1", "cli")
        done[c.session_id] = undone(c, in_place)
    if in_place:
        c = Conversation(truth, db, "20260101_130000_cfffc1", "cli", head=2)
        done[c.session_id] = commit_fail_commit(c)
        c = Conversation(truth, db, "20260101_133000_fthen1", "cli", head=2)
        done[c.session_id] = fail_then_commit(c)
        c = Conversation(truth, db, "20260101_140000_resum1", "cli")
        done[c.session_id] = resumed(c)
    c = Conversation(truth, db, "20260101_150000_long01", "cli", head=2)
    done.update(long_session(c, in_place))
    return done


def strip_hermes_text(connection: sqlite3.Connection) -> None:
    """Hermes' own prompt text, replaced by placeholders: the system prompt, and the
    compressor's instructions opening every summary (copies of a summary stay alike)."""
    from agent.context_compressor import SUMMARY_PREFIX

    connection.execute("UPDATE sessions SET system_prompt = ?", (PROMPT_PLACEHOLDER,))
    connection.execute(
        "UPDATE messages SET content = replace(content, ?, ?) WHERE instr(content, ?) > 0",
        (SUMMARY_PREFIX, SUMMARY_PLACEHOLDER, SUMMARY_PREFIX),
    )


def drop_search_index(connection: sqlite3.Connection) -> None:
    """Hermes' full-text index (its FTS5 tables and their triggers): most of a file's size,
    and nothing the importer reads."""
    found = connection.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'table') "
        "AND name LIKE 'messages_fts%' ORDER BY type = 'table'"
    ).fetchall()
    for kind, name in found:
        if (
            kind == "trigger"
            or connection.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        ):
            connection.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')


def main(out: Path) -> None:
    release = installed_version("hermes-agent")
    for n in range(7):
        FILES.mkdir(exist_ok=True)
        (FILES / f"module_{n}.py").write_text(f"def tidy_{n}():\n    return {n}\n")
    db_path = HOME / "state.db"
    db = SessionDB(db_path=db_path)
    truth = Truth(db_path)
    truth.tap()
    done = scenarios(truth, db)
    db.close()
    target = out / release
    target.mkdir(parents=True, exist_ok=True)
    copy_path = target / "state.db.tmp"
    with sqlite3.connect(db_path) as source, sqlite3.connect(copy_path) as copy:
        source.backup(copy)  # one file, no WAL beside it
        strip_hermes_text(copy)
    for connection in (source, copy):
        connection.close()
    with sqlite3.connect(copy_path, isolation_level=None) as copy:
        drop_search_index(copy)
        copy.execute("VACUUM")
    copy.close()
    os.replace(copy_path, target / "state.db")
    truth.dump(target / "truth.json", release, SCHEMA_VERSION, done)
    MODEL.close()
    print(
        f"hermes-agent {release} (schema {SCHEMA_VERSION}): {len(done)} sessions, "
        f"{len(truth.rows)} rows -> {target}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
