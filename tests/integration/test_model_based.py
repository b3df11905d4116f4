"""Model-based test (issue 6, "Model-based testing"): a hypothesis state machine drives random
sequences of calls against a SQLite store file and against a small reference model written
here in plain Python (the active id list, every stored message with its marks, the audit).

Steps: start (same and other arguments), append (messages without ids, with new ids, with
stored ids and identical content — a no-op, or a restore of a rewound message — or other
content — MessageConflictError, nothing stored — and with an id repeated inside one call),
tool exchanges, sync with stale and fresh lists (and with an edited stale message; a
rewound id in a stale list is skipped), compact (committed; summarize error; invalid
replacement; orphaned tool result), attempts begun and settled later (interleaved, so that a
second commit meets a `conflict`; settled twice; settled through another store), fail
compaction (with and without the replacement), rewind (by count, over the context too, or to
an active, inactive or unknown id; invalid arguments; one that would leave a tool result
without its call; an attempt begun before it meets a `conflict`), forget (then every write to
the session, `start` and `rewind` included, and every settling of an attempt begun before is
`SessionErasedError`), rebuild_projections and reopen.

After every step: active context, history, audit, sessions and the event log equal the model
(an erased session: its tombstone alone, every content read `SessionErasedError`);
no id appears twice in the active list or in the history; `verify_projections()` is clean.
Every failed attempt is also checked right where it happens to have changed nothing but the
audit.

Default run: 200 examples of at most 15 steps (about 25 s on 2 cores). A long soak (about
half an hour for 5,000 examples of up to 40 steps):

    TRANSCRIPTS_SOAK_EXAMPLES=5000 TRANSCRIPTS_SOAK_STEPS=40 \\
        .venv/bin/python -m pytest -q tests/integration/test_model_based.py

`TRANSCRIPTS_SOAK_EXAMPLES` is the number of examples (default 200), `TRANSCRIPTS_SOAK_STEPS`
the most steps in one (default 15). A failure prints the shortest sequence of calls that
shows it, and hypothesis replays it first on the next run.
"""

from __future__ import annotations

import copy
import os
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from support.messages import tool_exchange, without_id
from transcripts import (
    MessageConflictError,
    MessageNotFoundError,
    SessionErasedError,
    SessionNotFoundError,
    TranscriptError,
    TranscriptStore,
)

EXAMPLES = int(os.environ.get("TRANSCRIPTS_SOAK_EXAMPLES", "200"))
STEPS = int(os.environ.get("TRANSCRIPTS_SOAK_STEPS", "15"))

SESSIONS = ("s0", "s1", "s2")  # s2 is often never started: every call on it must say so
GIVEN_IDS = ("u0", "u1", "u2", "u3")  # ids users give, shared by the sessions
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
MAX_PENDING = 3
SETTLED_OR_FOREIGN = "already committed or failed|not begun by this store"
ANY_TEXT = object()  # an audit error the model does not predict: any non-empty text


# -- the reference model ------------------------------------------------------------------


@dataclass
class Stored:
    """A message a session stored, with its marks."""

    content: dict
    active: bool = True
    superseded_by: str | None = None
    added_by: str | None = None
    rewound: bool = False


@dataclass
class SessionModel:
    source: str
    version: int = 1  # the Started event
    events: list[str] = field(default_factory=lambda: ["Started"])
    active: list[str] = field(default_factory=list)
    stored: dict[str, Stored] = field(default_factory=dict)  # in storage order
    audit: list[dict] = field(default_factory=list)
    fence_version: int = 0  # of the last compaction committed or rewind
    held: list[list[dict]] = field(default_factory=list)  # lists an agent once held

    def message(self, message_id: str) -> dict:
        return {"id": message_id, **self.stored[message_id].content}

    def active_messages(self) -> list[dict]:
        return [self.message(message_id) for message_id in self.active]

    def history(self) -> list[dict]:
        return [
            {
                "id": message_id,
                "active": entry.active,
                "superseded_by": entry.superseded_by,
                "added_by": entry.added_by,
                "rewound": entry.rewound,
                "message": self.message(message_id),
            }
            for message_id, entry in self.stored.items()
        ]

    def event(self, kind: str) -> int:
        self.version += 1
        self.events.append(kind)
        return self.version

    def store_message(self, message_id: str, content: dict, added_by: str | None = None) -> None:
        assert message_id not in self.stored, f"the store reused id {message_id!r}"
        self.stored[message_id] = Stored(dict(content), added_by=added_by)

    def pairing(self, ids: list[str]) -> tuple[dict[str, str], dict[str, str]]:
        """(call id -> message making it, tool message -> call id it answers) over `ids`."""
        makers: dict[str, str] = {}
        answers: dict[str, str] = {}
        for message_id in ids:
            content = self.stored[message_id].content
            if content.get("role") == "assistant" and isinstance(content.get("tool_calls"), list):
                for call in content["tool_calls"]:
                    if isinstance(call, dict) and isinstance(call.get("id"), str):
                        makers[call["id"]] = message_id
            if content.get("role") == "tool" and isinstance(content.get("tool_call_id"), str):
                answers[message_id] = content["tool_call_id"]
        return makers, answers


@dataclass(frozen=True)
class Erased:
    """What the tombstone of a forgotten session records."""

    source: str
    version: int  # the tombstone's
    messages: int
    compactions_committed: int
    compactions_failed: int


@dataclass
class Pending:
    """An attempt begun and not settled yet, with what the model says it saw."""

    attempt: Any
    session_id: str
    snapshot: list[str]
    version: int
    settled: bool = False
    foreign: bool = False  # begun by a store that was closed since


@dataclass
class Outcome:
    """What the model expects a commit to do."""

    failure: str | None  # None: committed
    would_supersede: list[str] = field(default_factory=list)
    order: list[str | None] = field(default_factory=list)  # None: a new message
    new: list[dict] = field(default_factory=list)  # contents of the new messages, in order
    new_ids: list[str | None] = field(default_factory=list)  # the id each brings, if any


def kept_ids(replacement: object) -> set[str]:
    """The ids a replacement names (what a failed attempt would not have superseded)."""
    if isinstance(replacement, list):
        return {
            item["id"]
            for item in replacement
            if isinstance(item, dict) and isinstance(item.get("id"), str)
        }
    return set()


def plan(model: SessionModel, pending: Pending, replacement: object) -> Outcome:
    """The compaction contract of the README, written independently of domain/compaction.py."""
    snapshot = pending.snapshot
    if model.fence_version > pending.version:
        named = kept_ids(replacement)
        return Outcome("conflict", [i for i in snapshot if i not in named])
    invalid = Outcome("invalid_replacement", list(snapshot))
    if not isinstance(replacement, list):
        return invalid
    order: list[str | None] = []
    new: list[dict] = []
    new_ids: list[str | None] = []  # the id each new message brings, if any
    kept: list[str] = []
    for item in replacement:
        if not isinstance(item, dict) or item.get("role") not in ROLES:
            return invalid
        message_id = item.get("id")
        content = without_id(item)
        if message_id is not None and not (isinstance(message_id, str) and message_id):
            return invalid
        if message_id is None or message_id not in model.stored:
            if message_id is not None and message_id in new_ids:
                return invalid
            new_ids.append(message_id)
            order.append(None)
            new.append(content)
        elif message_id not in snapshot or message_id in kept:
            return invalid
        elif content != model.stored[message_id].content:
            return invalid
        else:
            kept.append(message_id)
            order.append(message_id)
    superseded = [i for i in snapshot if i not in kept]
    # Tool pairing: a tool message answering a call made by a message active before the
    # compaction (or by a new one) must come after that message in the result.
    makers, _ = model.pairing(model.active)
    new_makers: dict[str, int] = {}  # call id -> index of the new message making it
    for index, content in enumerate(new):
        if content.get("role") == "assistant" and isinstance(content.get("tool_calls"), list):
            for call in content["tool_calls"]:
                new_makers[call["id"]] = index
    tail = [i for i in model.active if i not in snapshot]
    result = [*order, *tail]
    seen: set[str] = set()
    new_seen: set[int] = set()
    new_index = 0
    for message_id in result:
        if message_id is None:
            content = new[new_index]
            new_seen.add(new_index)
            new_index += 1
        else:
            content = model.stored[message_id].content
        call_id = content.get("tool_call_id") if content.get("role") == "tool" else None
        if isinstance(call_id, str):
            if call_id in new_makers and new_makers[call_id] not in new_seen:
                return Outcome("orphaned_tool_result", superseded)
            if call_id not in new_makers and call_id in makers and makers[call_id] not in seen:
                return Outcome("orphaned_tool_result", superseded)
        if message_id is not None:
            seen.add(message_id)
    return Outcome(None, superseded, order, new, new_ids)


# -- the state machine ----------------------------------------------------------------------

content_texts = st.sampled_from(["hi", "hello", "summary", "ok", "λ ünïcode ✓", ""])
plain_roles = st.sampled_from(["system", "developer", "user", "assistant"])


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = tempfile.mkdtemp(prefix="transcripts-model-")
        self.url = f"sqlite:///{self.directory}/store.db"
        self.store = TranscriptStore.open(self.url)
        self.sessions: dict[str, SessionModel] = {}
        self.erased: dict[str, Erased] = {}
        self.pending: list[Pending] = []
        self.fresh = count()

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------------

    def content(self, data: st.DataObject, role: str | None = None) -> dict:
        role = role or data.draw(plain_roles, label="role")
        text = data.draw(content_texts, label="text")
        if data.draw(st.booleans(), label="parts"):
            parts = [{"type": "text", "text": text}]
            return {"role": role, "content": parts, "n": next(self.fresh)}
        return {"role": role, "content": f"{text} {next(self.fresh)}"}

    def tool_exchange(self) -> list[dict]:
        return tool_exchange(f"call_{next(self.fresh)}", "result", name="f")

    def observe(self, session_id: str) -> dict[str, Any]:
        return {
            "active": self.store.active(session_id),
            "history": self.store.history(session_id),
            "compactions": self.store.compactions(session_id),
        }

    def check_conflicts(self, session_id: str, messages: list[dict]) -> None:
        """Raise MessageConflictError where the store must: a stored id (or one given earlier
        in the same call) given again with other content."""
        model = self.sessions[session_id]
        planned: dict[str, dict] = {}
        for message in messages:
            message_id = message.get("id")
            if message_id is None:
                continue
            known = model.stored[message_id].content if message_id in model.stored else None
            known = planned.get(message_id, known)
            if known is not None and known != without_id(message):
                raise MessageConflictError(session_id, message_id)
            planned[message_id] = without_id(message)

    def check_append(
        self, session_id: str, messages: list[dict], returned: list[dict], *, restore: bool = True
    ) -> None:
        """Check what an append (`restore`) or a sync returned and apply it to the model."""
        model = self.sessions[session_id]
        assert len(returned) == len(messages)
        made_up: set[str] = set()
        for given, stored in zip(messages, returned, strict=True):
            assert without_id(stored) == without_id(given)
            if "id" in given:
                assert stored["id"] == given["id"]
            else:
                assert isinstance(stored["id"], str) and stored["id"]
                assert stored["id"] not in model.stored and stored["id"] not in made_up
                made_up.add(stored["id"])
            if stored["id"] not in model.stored:
                model.store_message(stored["id"], without_id(given))
                model.active.append(stored["id"])
                model.event("MessageAppended")
            elif restore and model.stored[stored["id"]].rewound:  # restored, at the end
                entry = model.stored[stored["id"]]
                entry.active, entry.rewound = True, False
                model.active.append(stored["id"])
                model.event("MessageAppended")

    def append_checked(self, session_id: str, messages: list[dict]) -> list[dict] | None:
        """Append through the store and the model; None when both refused with a conflict."""
        model = self.sessions.get(session_id)
        if session_id in self.erased:
            with pytest.raises(SessionErasedError):
                self.store.append(session_id, messages)
            return None
        if model is None:
            with pytest.raises(SessionNotFoundError):
                self.store.append(session_id, messages)
            return None
        try:
            self.check_conflicts(session_id, messages)
        except MessageConflictError as expected:
            before = self.observe(session_id)
            with pytest.raises(MessageConflictError) as raised:
                self.store.append(session_id, messages)
            assert raised.value.message_id == expected.message_id
            assert self.observe(session_id) == before
            return None
        returned = self.store.append(session_id, messages)
        self.check_append(session_id, messages, returned)
        return returned

    def settle(
        self,
        pending: Pending,
        outcome: Outcome,
        result: Any,
        *,
        error: object,
        reason: str,
        tokens: tuple[int | None, int | None],
        before: dict,
    ) -> None:
        """Check a settled attempt against the model's outcome and apply it."""
        model = self.sessions[pending.session_id]
        pending.settled = True
        assert result.compaction_id == pending.attempt.id
        entry: dict[str, Any] = {
            "id": pending.attempt.id,
            "reason": reason,
            "based_on_version": pending.version,
            "tokens_before": tokens[0],
            "tokens_after": tokens[1],
        }
        if outcome.failure is not None:
            assert result.committed is False
            assert result.failure == outcome.failure, result.error
            assert isinstance(result.error, str) and result.error
            if error is not ANY_TEXT:
                assert result.error == error
            after = self.observe(pending.session_id)
            # A failed attempt changes nothing but the audit, which gains exactly its entry.
            assert after["active"] == before["active"] == model.active_messages()
            assert after["history"] == before["history"]
            assert after["compactions"][:-1] == before["compactions"]
            assert result.messages == model.active_messages()
            version = model.event("CompactionFailed")
            model.audit.append(
                entry
                | {
                    "status": "failed",
                    "failure": outcome.failure,
                    "error": result.error,
                    "superseded": outcome.would_supersede,
                    "added": [],
                    "version": version,
                }
            )
            return
        assert result.committed is True, (result.failure, result.error)
        assert result.failure is None and result.error is None
        version = model.event("CompactionCommitted")
        model.fence_version = version
        tail = [i for i in model.active if i not in pending.snapshot]
        returned = result.messages
        assert len(returned) == len(outcome.order) + len(tail)
        order: list[str] = []
        added: list[str] = []
        contents = iter(zip(outcome.new, outcome.new_ids, strict=True))
        for slot, message in zip(outcome.order, returned, strict=False):
            if slot is None:
                content, given_id = next(contents)
                assert without_id(message) == content
                assert given_id is None or message["id"] == given_id
                assert message["id"] not in model.stored
                model.store_message(message["id"], content, added_by=pending.attempt.id)
                added.append(message["id"])
                order.append(message["id"])
            else:
                assert message["id"] == slot
                order.append(slot)
        for message_id in outcome.would_supersede:
            stored = model.stored[message_id]
            stored.active, stored.superseded_by = False, pending.attempt.id
        model.active = [*order, *tail]
        assert returned == model.active_messages()
        model.audit.append(
            entry
            | {
                "status": "committed",
                "failure": None,
                "error": None,
                "superseded": outcome.would_supersede,
                "added": added,
                "version": version,
            }
        )
        model.held.append(list(returned))

    def begin(self, session_id: str) -> Pending:
        model = self.sessions[session_id]
        attempt = self.store.begin_compaction(session_id)
        assert attempt.session_id == session_id
        assert attempt.version == model.version
        assert attempt.messages == model.active_messages()
        return Pending(attempt, session_id, list(model.active), model.version)

    def replacement(self, data: st.DataObject, pending: Pending, kind: str) -> object:
        """A replacement of `kind` for an attempt's snapshot.

        valid: a subset of the snapshot kept (in order or shuffled) and new messages; it may
        still break a tool exchange, which the model then expects to fail. The other kinds
        are invalid replacements (the model finds out which failure they meet)."""
        model = self.sessions[pending.session_id]
        snapshot = [dict(message) for message in pending.attempt.messages]
        if kind == "valid":
            kept = [m for m in snapshot if data.draw(st.booleans(), label=f"keep {m['id']}")]
            if data.draw(st.integers(0, 4), label="shuffle") == 0:
                random.Random(data.draw(st.integers(0, 99), label="seed")).shuffle(kept)
            items: list[object] = list(kept)
            for _ in range(data.draw(st.integers(0, 2), label="new messages")):
                if data.draw(st.integers(0, 5), label="new exchange") == 0:
                    new = self.tool_exchange()
                else:
                    new = [self.content(data, role="system")]
                    if data.draw(st.booleans(), label="with an id of its own"):
                        new[0]["id"] = f"own-{next(self.fresh)}"
                at = data.draw(st.integers(0, len(items)), label="at")
                items[at:at] = new
            return items
        if kind == "edited" and snapshot:
            edited = dict(data.draw(st.sampled_from(snapshot), label="edited"))
            edited["content"] = f"edited {next(self.fresh)}"
            return [edited]
        if kind == "twice" and snapshot:
            kept_twice = data.draw(st.sampled_from(snapshot), label="twice")
            return [kept_twice, dict(kept_twice)]
        if kind == "foreign_id":
            others = [i for i in model.stored if i not in pending.snapshot]
            if others and data.draw(st.booleans(), label="stored elsewhere"):
                return [model.message(data.draw(st.sampled_from(others), label="foreign id"))]
            return [{"id": "never-stored", "role": "system", "content": "x"}]
        return copy.deepcopy(data.draw(
            st.sampled_from(
                [
                    "a summary as text",
                    {"role": "system", "content": "one message, not a list"},
                    ["a string item"],
                    [{"content": "no role"}],
                    [{"role": "robot", "content": "unknown role"}],
                    [{"id": 7, "role": "system", "content": "an id that is no string"}],
                ]
            ),
            label="invalid replacement",
        ))  # fmt: skip

    def commit(self, data: st.DataObject, pending: Pending, replacement: object) -> None:
        model = self.sessions[pending.session_id]
        reason = data.draw(st.sampled_from(["", "over budget", "nightly ✓"]), label="reason")
        tokens: tuple[int | None, int | None] = data.draw(
            st.sampled_from([(None, None), (1000, 200), (0, 0)]), label="tokens"
        )
        if pending.foreign or pending.settled:
            before = self.observe(pending.session_id)
            with pytest.raises(TranscriptError, match=SETTLED_OR_FOREIGN):
                self.store.commit_compaction(
                    pending.attempt, replacement, reason=reason,
                    tokens_before=tokens[0], tokens_after=tokens[1],
                )  # fmt: skip
            assert self.observe(pending.session_id) == before
            return
        outcome = plan(model, pending, replacement)
        before = self.observe(pending.session_id)
        result = self.store.commit_compaction(
            pending.attempt, replacement, reason=reason,
            tokens_before=tokens[0], tokens_after=tokens[1],
        )  # fmt: skip
        self.settle(pending, outcome, result, error=ANY_TEXT, reason=reason, tokens=tokens,
                    before=before)  # fmt: skip

    def started(self) -> list[str]:
        return sorted(self.sessions)

    def open_pending(self) -> list[Pending]:
        return [p for p in self.pending if not p.settled and not p.foreign]

    def live_pending(self) -> list[Pending]:
        """Attempts of sessions that were not erased since they began."""
        return [p for p in self.pending if p.session_id not in self.erased]

    def orphaned_pending(self) -> list[Pending]:
        """Attempts begun by this store on sessions erased since."""
        return [p for p in self.pending if p.session_id in self.erased and not p.foreign]

    # -- rules ----------------------------------------------------------------------------------

    @initialize(source=st.sampled_from(["api", "agent"]))
    def start_the_first_session(self, source: str) -> None:
        self.start(SESSIONS[0], source)

    @rule(session_id=st.sampled_from(SESSIONS), source=st.sampled_from(["api", "agent"]))
    def start(self, session_id: str, source: str) -> None:
        model = self.sessions.get(session_id)
        if session_id in self.erased:
            with pytest.raises(SessionErasedError):
                self.store.start(session_id, source=source)
        elif model is None:
            self.store.start(session_id, source=source)
            self.sessions[session_id] = SessionModel(source)
        elif model.source == source:
            self.store.start(session_id, source=source)  # the same arguments: a no-op
        else:
            before = self.observe(session_id)
            with pytest.raises(TranscriptError, match="already started"):
                self.store.start(session_id, source=source)
            assert self.observe(session_id) == before

    @rule(session_id=st.sampled_from(SESSIONS), data=st.data())
    def append(self, session_id: str, data: st.DataObject) -> None:
        model = self.sessions.get(session_id)
        stored = list(model.stored) if model else []
        messages: list[dict] = []
        for _ in range(data.draw(st.integers(1, 4), label="messages")):
            kind = data.draw(
                st.sampled_from(
                    ["new", "new", "given id", "same", "different", "again in call", "tool result"]
                ),
                label="kind",
            )
            if kind == "given id":
                messages.append(
                    {"id": data.draw(st.sampled_from(GIVEN_IDS), label="id"), **self.content(data)}
                )
            elif kind in ("same", "different") and stored:
                message_id = data.draw(st.sampled_from(stored), label="stored id")
                message = model.message(message_id)  # type: ignore[union-attr]
                if kind == "different":
                    message["content"] = f"changed {next(self.fresh)}"
                messages.append(message)
            elif kind == "again in call" and messages:
                repeated = dict(data.draw(st.sampled_from(messages), label="repeated"))
                if "id" in repeated and data.draw(st.booleans(), label="changed in call"):
                    repeated["content"] = f"changed {next(self.fresh)}"
                messages.append(repeated)
            elif kind == "tool result":
                known_calls = [
                    call["id"]
                    for entry in (model.stored.values() if model else [])
                    for call in entry.content.get("tool_calls") or []
                ]
                call_id = data.draw(st.sampled_from([*known_calls, "call_unknown"]), label="call")
                messages.append({"role": "tool", "tool_call_id": call_id, "content": "late"})
            else:
                messages.append(self.content(data))
        returned = self.append_checked(session_id, messages)
        if returned is not None and model is not None:
            model.held.append(list(returned))

    @rule(session_id=st.sampled_from(SESSIONS), with_ids=st.booleans())
    def append_tool_exchange(self, session_id: str, with_ids: bool) -> None:
        exchange = self.tool_exchange()
        if with_ids:
            exchange = [{"id": f"t{next(self.fresh)}", **message} for message in exchange]
        self.append_checked(session_id, exchange)

    @precondition(lambda self: self.sessions)
    @rule(data=st.data())
    def sync(self, data: st.DataObject) -> None:
        session_id = data.draw(st.sampled_from(self.started()), label="session")
        model = self.sessions[session_id]
        lists = [model.active_messages(), *model.held[-6:]]
        live = [dict(m) for m in data.draw(st.sampled_from(lists), label="stale or fresh list")]
        for _ in range(data.draw(st.integers(0, 2), label="new")):
            live.append(self.content(data, role="assistant"))
        edited = live and "id" in live[0] and data.draw(st.integers(0, 5), label="edit") == 0
        if edited:
            live[0] = {**live[0], "content": f"edited {next(self.fresh)}"}
        try:
            self.check_conflicts(session_id, live)
        except MessageConflictError:
            assert edited
            before = self.observe(session_id)
            with pytest.raises(MessageConflictError):
                self.store.sync(session_id, live)
            assert self.observe(session_id) == before
            return
        returned = self.store.sync(session_id, live)
        new = [m for m in live if "id" not in m]
        made_up = returned[len(returned) - len(new) :] if new else []  # appended at the end
        # Apply to the model (stored ids skipped, new ones appended) and check the new ones.
        self.check_append(session_id, live, _fill_ids(live, made_up), restore=False)
        assert returned == model.active_messages()
        model.held.append(list(returned))

    @precondition(lambda self: self.sessions)
    @rule(
        data=st.data(),
        kind=st.sampled_from(
            ["valid"] * 4 + ["summarize error", "orphan", "edited", "twice", "foreign_id", "bad"]
        ),
    )
    def compact(self, data: st.DataObject, kind: str) -> None:
        session_id = data.draw(st.sampled_from(self.started()), label="session")
        model = self.sessions[session_id]
        if kind == "orphan":
            makers, answers = model.pairing(model.active)
            if not any(call in makers for call in answers.values()):
                self.append_checked(session_id, self.tool_exchange())
        reason = data.draw(st.sampled_from(["", "context over budget"]), label="reason")
        snapshot = model.active_messages()
        replacement: object = None
        if kind == "orphan":
            makers, answers = model.pairing(model.active)
            tool = next(t for t, call in answers.items() if call in makers)
            # Keep the tool result but drop the assistant message making its call.
            replacement = [
                {"role": "system", "content": "summary"},
                *(m for m in snapshot if m["id"] != makers[answers[tool]]),
            ]
        elif kind != "summarize error":
            view = Pending(_AttemptView(snapshot), session_id, list(model.active), 0)
            replacement = self.replacement(data, view, kind)
        given: list[list[dict]] = []

        def summarize(messages: list[dict]) -> object:
            given.append(messages)
            if kind == "summarize error":
                raise RuntimeError(f"the model is down {len(messages)}")
            return replacement

        before = self.observe(session_id)
        result = self.store.compact(session_id, summarize, reason=reason)
        assert given == [snapshot]
        pending = Pending(_Settled(result.compaction_id), session_id, list(model.active),
                          model.version)  # fmt: skip
        if kind == "summarize error":
            outcome = Outcome("summarize_error", list(pending.snapshot))
            error: object = f"RuntimeError: the model is down {len(pending.snapshot)}"
        else:
            outcome = plan(model, pending, replacement)
            error = ANY_TEXT
        if kind == "orphan":
            assert outcome.failure == "orphaned_tool_result"
        self.settle(pending, outcome, result, error=error, reason=reason, tokens=(None, None),
                    before=before)  # fmt: skip

    @precondition(lambda self: self.sessions and len(self.open_pending()) < MAX_PENDING)
    @rule(data=st.data())
    def begin_compaction(self, data: st.DataObject) -> None:
        session_id = data.draw(st.sampled_from(self.started()), label="session")
        self.pending.append(self.begin(session_id))

    @precondition(lambda self: self.live_pending())
    @rule(
        data=st.data(),
        kind=st.sampled_from(["valid"] * 4 + ["edited", "twice", "foreign_id", "bad"]),
    )
    def commit_compaction(self, data: st.DataObject, kind: str) -> None:
        pending = data.draw(st.sampled_from(self.live_pending()), label="attempt")
        self.commit(data, pending, self.replacement(data, pending, kind))

    @precondition(lambda self: self.live_pending())
    @rule(data=st.data())
    def fail_compaction(self, data: st.DataObject) -> None:
        pending = data.draw(st.sampled_from(self.live_pending()), label="attempt")
        failure = data.draw(
            st.sampled_from(["summarize_error", "timeout", "storage_error"]), label="failure"
        )
        as_exception = data.draw(st.booleans(), label="as exception")
        error: BaseException | str = TimeoutError("slow") if as_exception else "gave up ✗"
        replacement = (
            self.replacement(data, pending, "valid")
            if data.draw(st.booleans(), label="with replacement")
            else None
        )
        if pending.foreign or pending.settled:
            before = self.observe(pending.session_id)
            with pytest.raises(TranscriptError, match=SETTLED_OR_FOREIGN):
                self.store.fail_compaction(pending.attempt, error, failure=failure)
            assert self.observe(pending.session_id) == before
            return
        before = self.observe(pending.session_id)
        result = self.store.fail_compaction(
            pending.attempt, error, failure=failure, reason="given up", replacement=replacement
        )
        named = kept_ids(replacement)
        outcome = Outcome(failure, [i for i in pending.snapshot if i not in named])
        text = "TimeoutError: slow" if as_exception else "gave up ✗"
        self.settle(pending, outcome, result, error=text, reason="given up",
                    tokens=(None, None), before=before)  # fmt: skip

    @precondition(lambda self: self.sessions)
    @rule(data=st.data(), append_between=st.booleans(), first_wins=st.booleans())
    def race_two_compactions(self, data: st.DataObject, append_between: bool,
                             first_wins: bool) -> None:  # fmt: skip
        """Two attempts begun on the same version; the one committed second meets `conflict`."""
        session_id = data.draw(st.sampled_from(self.started()), label="session")
        model = self.sessions[session_id]
        first = self.begin(session_id)
        if append_between:
            self.append_checked(session_id, [self.content(data)])
        second = self.begin(session_id)
        winner, loser = (first, second) if first_wins else (second, first)
        winners_summary = {"role": "system", "content": "winner's summary"}
        keep_all = [*winner.attempt.messages, winners_summary]
        # Restores can put a tool result before its call: then no list keeping both commits.
        valid = plan(model, winner, keep_all).failure is None
        self.commit(data, winner, keep_all if valid else [winners_summary])
        assert model.audit[-1]["status"] == "committed"
        summary = [{"role": "system", "content": "loser's summary"}]
        before = self.observe(session_id)
        result = self.store.commit_compaction(loser.attempt, summary)
        assert plan(model, loser, summary).failure == "conflict"
        self.settle(loser, Outcome("conflict", list(loser.snapshot)), result, error=ANY_TEXT,
                    reason="", tokens=(None, None), before=before)  # fmt: skip

    @rule(
        data=st.data(),
        kind=st.sampled_from(["count"] * 4 + ["to"] * 2 + ["to inactive", "to unknown", "invalid"]),
    )
    def rewind(self, data: st.DataObject, kind: str) -> None:
        """A rewind, checked against the README's Rewind section written out here; mostly of
        a started session, sometimes of one never started or erased."""
        session_id = data.draw(
            st.sampled_from([*self.started()] * 3 + list(SESSIONS)), label="session"
        )
        model = self.sessions.get(session_id)
        if model is not None and not model.active and kind in ("count", "to"):
            self.append_checked(session_id, [self.content(data), *self.tool_exchange()])
        active = model.active if model else []
        reason = data.draw(st.sampled_from(["", "undo ✓"]), label="reason")
        arguments: dict[str, Any] = {"reason": reason}
        if kind == "count":
            arguments["count"] = data.draw(st.integers(1, len(active) + 2), label="count")
        elif kind == "to" and active:
            arguments["to"] = data.draw(st.sampled_from(active), label="to")
        elif kind == "to inactive" and model and len(model.stored) > len(active):
            inactive = [i for i in model.stored if i not in active]
            arguments["to"] = data.draw(st.sampled_from(inactive), label="to")
        elif kind == "invalid":
            arguments = data.draw(
                st.sampled_from([{}, {"count": 0}, {"count": 1, "to": "u0"}, {"count": "1"}]),
                label="invalid arguments",
            )
        else:
            arguments["to"] = "never-stored"
        before = self.observe(session_id) if model else None
        expected = self.rewound(session_id, arguments)
        if isinstance(expected, type):
            with pytest.raises(expected):
                self.store.rewind(session_id, **arguments)
            if model:
                assert self.observe(session_id) == before
            return
        assert model is not None
        stale = model.active_messages()
        model.held.append(stale)  # a list an agent held before the rewind
        returned = self.store.rewind(session_id, **arguments)
        assert returned == [model.message(message_id) for message_id in expected]
        if expected:
            version = model.event("Rewound")
            model.fence_version = version
            model.active = [i for i in model.active if i not in expected]
            for message_id in expected:
                model.stored[message_id].active, model.stored[message_id].rewound = False, True
            if data.draw(st.booleans(), label="sync the stale list"):  # restores nothing
                assert self.store.sync(session_id, stale) == model.active_messages()
                assert len(self.store.events(session_id)) == model.version
        else:
            assert self.observe(session_id) == before

    @precondition(lambda self: self.rewound_messages())
    @rule(data=st.data(), with_new=st.booleans())
    def restore(self, data: st.DataObject, with_new: bool) -> None:
        """Append rewound messages again (identical content): restored, at the end."""
        session_id, message_id = data.draw(
            st.sampled_from(self.rewound_messages()), label="rewound"
        )
        model = self.sessions[session_id]
        messages = [model.message(message_id)]
        if with_new:
            messages.append(self.content(data))
        self.append_checked(session_id, messages)
        assert model.active[-len(messages)] == message_id

    @precondition(lambda self: any(model.active for model in self.sessions.values()))
    @rule(data=st.data())
    def rewind_during_an_attempt(self, data: st.DataObject) -> None:
        """An attempt begun before a rewind meets a `conflict` when it commits."""
        session_id = data.draw(
            st.sampled_from([s for s in self.started() if self.sessions[s].active]), label="session"
        )
        # (restores may have put a tool result before its call: then the call cannot go)
        assume(isinstance(self.rewound(session_id, {"count": 1}), list))
        model = self.sessions[session_id]
        pending = self.begin(session_id)
        returned = self.store.rewind(session_id, count=1)
        assert returned == model.active_messages()[-1:]
        model.fence_version = model.event("Rewound")
        gone = model.active.pop()
        model.stored[gone].active, model.stored[gone].rewound = False, True
        replacement = [{"role": "system", "content": "too late"}]
        assert plan(model, pending, replacement).failure == "conflict"
        self.commit(data, pending, replacement)
        assert model.audit[-1]["failure"] == "conflict"

    def rewound_messages(self) -> list[tuple[str, str]]:
        """(session id, message id) of every rewound message of a started session."""
        return [
            (session_id, message_id)
            for session_id in self.started()
            for message_id, entry in self.sessions[session_id].stored.items()
            if entry.rewound
        ]

    def rewound(self, session_id: str, arguments: dict[str, Any]) -> list[str] | type:
        """The ids a rewind takes out, or the error it raises."""
        model = self.sessions.get(session_id)
        count, to = arguments.get("count"), arguments.get("to")
        if (count is None) == (to is None) or (count is not None and type(count) is not int):
            return TranscriptError
        if count is not None and count < 1:
            return TranscriptError
        if session_id in self.erased:
            return SessionErasedError
        if model is None:
            return SessionNotFoundError
        if count is not None:
            ids = model.active[max(0, len(model.active) - count) :]
        elif to not in model.stored:
            return MessageNotFoundError
        elif to not in model.active:
            return TranscriptError
        else:
            ids = model.active[model.active.index(to) + 1 :]
        makers, answers = model.pairing(model.active)
        for message_id in model.active:
            call_id = answers.get(message_id)
            if message_id not in ids and call_id in makers and makers[call_id] in ids:
                return TranscriptError  # a result left before its rewound call
        return ids

    @precondition(lambda self: self.sessions)
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        session_id = data.draw(st.sampled_from(self.started()), label="session")
        model = self.sessions.pop(session_id)
        committed = sum(1 for entry in model.audit if entry["status"] == "committed")
        erased = Erased(model.source, model.version + 1, len(model.stored), committed,
                        len(model.audit) - committed)  # fmt: skip
        erasure = self.store.forget(session_id)
        assert not erasure.already_erased
        assert erasure.events == model.version
        assert (erasure.messages, erasure.compactions_committed, erasure.compactions_failed) == (
            erased.messages,
            erased.compactions_committed,
            erased.compactions_failed,
        )
        self.erased[session_id] = erased
        assert self.store.forget(session_id).already_erased  # again: nothing changes

    @precondition(lambda self: self.orphaned_pending())
    @rule(data=st.data(), commit=st.booleans())
    def settle_an_attempt_on_an_erased_session(self, data: st.DataObject, commit: bool) -> None:
        pending = data.draw(st.sampled_from(self.orphaned_pending()), label="attempt")
        with pytest.raises(SessionErasedError):
            if commit:
                self.store.commit_compaction(pending.attempt, [{"role": "user", "content": "x"}])
            else:
                self.store.fail_compaction(pending.attempt, "too late")

    @rule()
    def rebuild_projections(self) -> None:
        replayed = self.store.rebuild_projections()
        tombstones = len(self.erased)
        assert replayed == sum(model.version for model in self.sessions.values()) + tombstones

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = TranscriptStore.open(self.url)
        for pending in self.pending:
            pending.foreign = True  # begun by the store just closed

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def the_store_equals_the_model(self) -> None:
        store = self.store
        for session_id in SESSIONS:
            model = self.sessions.get(session_id)
            if session_id in self.erased:
                for read in (store.active, store.history, store.compactions):
                    with pytest.raises(SessionErasedError):
                        read(session_id)
                [tombstone] = store.events(session_id)
                assert (tombstone["type"], tombstone["version"]) == (
                    "Erased",
                    self.erased[session_id].version,
                )
                continue
            if model is None:
                with pytest.raises(SessionNotFoundError):
                    store.active(session_id)
                continue
            active = store.active(session_id)
            assert active == model.active_messages()
            ids = [message["id"] for message in active]
            assert len(ids) == len(set(ids)), "an id is twice in the active list"
            history = store.history(session_id)
            assert history == model.history()
            history_ids = [entry["id"] for entry in history]
            assert len(history_ids) == len(set(history_ids)), "an id is twice in the history"
            audit = store.compactions(session_id)
            assert len(audit) == len(model.audit)
            for entry, expected in zip(audit, model.audit, strict=True):
                assert {key: entry[key] for key in expected} == expected
            events = store.events(session_id)
            assert [event["type"] for event in events] == model.events
            assert [event["version"] for event in events] == list(range(1, model.version + 1))
        summaries = {s["id"]: s for s in store.sessions()}
        assert set(summaries) == {*self.sessions, *self.erased}
        for session_id, erased in self.erased.items():
            summary = summaries[session_id]
            assert summary["erased_at"] is not None
            assert (summary["source"], summary["version"], summary["messages"]) == (
                erased.source,
                erased.version,
                0,
            )
        for session_id, model in self.sessions.items():
            summary = summaries[session_id]
            committed = sum(1 for entry in model.audit if entry["status"] == "committed")
            assert (
                summary["source"], summary["version"], summary["messages"], summary["active"],
                summary["compactions_committed"], summary["compactions_failed"],
                summary["quarantined"], summary["rewound"],
            ) == (
                model.source, model.version, len(model.stored), len(model.active),
                committed, len(model.audit) - committed, 0,
                sum(entry.rewound for entry in model.stored.values()),
            )  # fmt: skip
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]


class _AttemptView:
    """What `replacement()` reads of an attempt inside `summarize`: its messages."""

    def __init__(self, messages: list[dict]) -> None:
        self.messages = messages


class _Settled:
    """Stands for the attempt `compact` began and settled, by its id."""

    def __init__(self, compaction_id: str) -> None:
        self.id = compaction_id


def _fill_ids(live: list[dict], made_up: list[dict]) -> list[dict]:
    """`live` with the ids the store gave its id-less messages, in order."""
    new = iter(made_up)
    return [message if "id" in message else next(new) for message in live]


def test_random_sequences_of_calls_leave_the_store_equal_to_its_reference_model() -> None:
    run_state_machine_as_test(
        StoreMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
