"""Property: whatever users do (starts, appends with and without ids, stale and fresh syncs,
committed compactions, each kind of failed one, rewinds and restores, erasures, reopenings of
the file, rebuilds), the views equal an independent fold of the log and a model of what the
calls returned, verify finds nothing, and a rebuild changes no row."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.log import expected_summary, fold_of
from support.messages import tool_exchange
from support.reads import everything
from support.rows import raw_rows
from transcripts import SessionErasedError, SessionNotFoundError, TranscriptStore

EXAMPLES = int(os.environ.get("VIEWS_PROPERTY_EXAMPLES", "60"))  # raise it to search longer
SESSIONS = ("s0", "s1", "s2")
POOLED_IDS = ("p0", "p1", "p2", "p3", "p4")  # ids users give, repeated across calls and sessions


def pooled(message_id: str) -> dict:
    """The content users always send with a pooled id (the same id, the same content)."""
    return {"id": message_id, "role": "user", "content": f"pooled {message_id}"}


@dataclass
class SessionModel:
    """What the calls so far say a session holds."""

    active: list[dict] = field(default_factory=list)
    history: dict[str, dict] = field(default_factory=dict)  # by id, in storage order
    compactions: list[tuple[str, str, str | None]] = field(
        default_factory=list
    )  # id, status, failure
    lists: list[list[dict]] = field(default_factory=list)  # active lists an agent once held
    erased: bool = False

    def stored(self, messages: list[dict]) -> None:
        """Messages an append stored: new ones, and rewound ones restored (at the end)."""
        for message in messages:
            entry = self.history.get(message["id"])
            if entry is not None and entry["rewound"]:
                entry |= {"active": True, "rewound": False}
                self.active.append(message)
            elif entry is None:
                self.history[message["id"]] = {
                    "id": message["id"],
                    "active": True,
                    "superseded_by": None,
                    "added_by": None,
                    "rewound": False,
                    "message": message,
                }
                self.active.append(message)
        self.lists.append(list(self.active))


class Run:
    """Interprets one generated sequence of operations against a store file."""

    def __init__(self, directory: Path) -> None:
        self.url = f"sqlite:///{directory / 'store.db'}"
        self.store = TranscriptStore.open(self.url)
        self.sessions: dict[str, SessionModel] = {}
        self.fresh = count()

    def new_message(self, role: str = "user") -> dict:
        return {"role": role, "content": f"new {next(self.fresh)}"}

    def tool_pair(self) -> list[dict]:
        return tool_exchange(f"call_{next(self.fresh)}", "ok", name="f")

    def do(self, op: tuple) -> None:
        name, *args = op
        if name == "reopen":
            self.store.close()
            self.store = TranscriptStore.open(self.url)
            return
        if name == "rebuild":  # later writes go on from the rebuilt views
            self.store.rebuild_projections()
            return
        session_id = args[0]
        model = self.sessions.get(session_id)
        if model is not None and model.erased and name != "forget":
            with pytest.raises(SessionErasedError):  # every write, `start` included
                self.store.start(session_id) if name == "start" else getattr(self, name)(
                    session_id, model, *args[1:]
                )
            return
        if name == "start":
            self.store.start(session_id, source="prop", model=f"model-{session_id}")
            self.sessions.setdefault(session_id, SessionModel())
            return
        if model is None:
            with pytest.raises(SessionNotFoundError):
                getattr(self, name)(session_id, SessionModel(), *args[1:])
            return
        getattr(self, name)(session_id, model, *args[1:])
        if not self.sessions[session_id].erased:
            assert self.store.active(session_id) == model.active

    # -- operations ----------------------------------------------------------------------

    def append(self, session_id: str, model: SessionModel, items: list[str | None]) -> None:
        messages: list[dict] = []
        for item in items:
            if item == "pair":
                messages += self.tool_pair()
            elif item is None:
                messages.append(self.new_message())
            else:
                messages.append(pooled(item))
        returned = self.store.append(session_id, messages)
        assert len(returned) == len(messages)
        assert all(r["id"] == m["id"] for r, m in zip(returned, messages, strict=True) if "id" in m)
        model.stored(returned)

    def rewind(self, session_id: str, model: SessionModel, back: int) -> None:
        """The last `back` active messages, or (0) every one after the first active one."""
        if back or not model.active:
            returned = self.store.rewind(session_id, count=back or 1, reason="prop")
            gone = model.active[max(0, len(model.active) - (back or 1)) :]
        else:
            returned = self.store.rewind(session_id, to=model.active[0]["id"])
            gone = model.active[1:]
        assert returned == gone
        for message in gone:
            model.history[message["id"]] |= {"active": False, "rewound": True}
        model.active = model.active[: len(model.active) - len(gone)]

    def restore(self, session_id: str, model: SessionModel) -> None:
        """Every rewound message appended again, in the order they were stored."""
        rewound = [e["message"] for e in model.history.values() if e["rewound"]]
        assert self.store.append(session_id, rewound) == rewound
        model.stored(rewound)

    def forget(self, session_id: str, model: SessionModel) -> None:
        erasure = self.store.forget(session_id)
        assert erasure.already_erased == model.erased
        if not model.erased:
            assert erasure.messages == len(model.history)
            assert erasure.compactions_committed + erasure.compactions_failed == len(
                model.compactions
            )
        self.sessions[session_id] = SessionModel(erased=True)

    def sync(self, session_id: str, model: SessionModel, stale: int, new: int) -> None:
        lists = model.lists or [[]]
        live = lists[max(0, len(lists) - 1 - stale)]  # stale > 0: a list from before later changes
        added = [self.new_message("assistant") for _ in range(new)]
        returned = self.store.sync(session_id, [*live, *added])
        stored_new = returned[len(returned) - new :] if new else []
        assert [{k: v for k, v in m.items() if k != "id"} for m in stored_new] == added
        model.stored(stored_new)
        assert returned == model.active

    def commit(self, session_id: str, model: SessionModel, keep: int) -> None:
        attempt = self.store.begin_compaction(session_id)
        start = max(0, len(attempt.messages) - keep)
        while 0 < start < len(attempt.messages) and attempt.messages[start]["role"] == "tool":
            start -= 1  # keep the assistant message making the call a kept tool result answers
        kept = attempt.messages[start:]
        summary = {"role": "system", "content": f"summary {next(self.fresh)}"}
        result = self.store.commit_compaction(
            attempt,
            [summary, *kept],
            reason="prop",
            tokens_before=len(attempt.messages),
            tokens_after=len(kept) + 1,
        )
        assert result.committed, result.error
        new = result.messages[0]
        assert {k: v for k, v in new.items() if k != "id"} == summary
        assert result.messages == [new, *kept]
        self.committed(model, attempt, result, kept)
        model.lists.append(list(model.active))

    def committed(self, model: SessionModel, attempt: Any, result: Any, kept: list[dict]) -> None:
        """Note in the model what a committed compaction did: its summary, then `kept`."""
        kept_ids = {m["id"] for m in kept}
        for message in attempt.messages:
            if message["id"] not in kept_ids:
                model.history[message["id"]] |= {
                    "active": False,
                    "superseded_by": result.compaction_id,
                }
        new = result.messages[0]
        model.history[new["id"]] = {
            "id": new["id"],
            "active": True,
            "superseded_by": None,
            "added_by": result.compaction_id,
            "rewound": False,
            "message": new,
        }
        model.active = list(result.messages)
        model.compactions.append((result.compaction_id, "committed", None))

    def failed(self, session_id: str, model: SessionModel, result: Any, failure: str) -> None:
        assert not result.committed
        assert result.failure == failure, result.error
        assert result.messages == model.active
        model.compactions.append((result.compaction_id, "failed", failure))

    def summarize_error(self, session_id: str, model: SessionModel) -> None:
        def summarize(messages: list[dict]) -> list[dict]:
            raise RuntimeError("the model is down")

        self.failed(session_id, model, self.store.compact(session_id, summarize), "summarize_error")

    def conflict(self, session_id: str, model: SessionModel) -> None:
        first = self.store.begin_compaction(session_id)
        second = self.store.begin_compaction(session_id)
        self.commit_attempt(model, first)
        late = self.store.commit_compaction(second, [{"role": "system", "content": "late summary"}])
        self.failed(session_id, model, late, "conflict")

    def commit_attempt(self, model: SessionModel, attempt: Any) -> None:
        result = self.store.commit_compaction(
            attempt, [{"role": "system", "content": "first summary"}]
        )
        assert result.committed, result.error
        self.committed(model, attempt, result, kept=[])

    def invalid_replacement(self, session_id: str, model: SessionModel) -> None:
        attempt = self.store.begin_compaction(session_id)
        result = self.store.commit_compaction(
            attempt,
            [{"id": "new", "role": "user", "content": "x"}] * 2,  # a new id twice
        )
        self.failed(session_id, model, result, "invalid_replacement")

    def orphaned_tool_result(self, session_id: str, model: SessionModel) -> None:
        self.append(session_id, model, ["pair"])
        attempt = self.store.begin_compaction(session_id)
        tool = attempt.messages[-1]
        result = self.store.commit_compaction(attempt, [{"role": "system", "content": "s"}, tool])
        self.failed(session_id, model, result, "orphaned_tool_result")

    # -- the property --------------------------------------------------------------------

    def check(self) -> None:
        store, url = self.store, self.url
        report = store.verify_projections()
        assert report.ok, [str(problem) for problem in report.problems]
        assert report.sessions == len(self.sessions)
        before = everything(store)
        folds = {session_id: fold_of(url, session_id) for session_id in self.sessions}
        assert before["sessions"] == sorted(
            (expected_summary(fold) for fold in folds.values()), key=lambda s: s["started_at"]
        )
        for session_id, model in self.sessions.items():
            fold = folds[session_id]
            got = before[session_id]
            if model.erased:
                assert got == {"erased_at": fold.erased_at} and fold.erased_at is not None
                assert fold.entries == {} and fold.compactions == []
                continue
            assert got["active"] == fold.active() == model.active
            assert got["history"] == fold.history() == list(model.history.values())
            assert got["compactions"] == fold.compactions
            assert [
                (c["id"], c["status"], c["failure"]) for c in got["compactions"]
            ] == model.compactions
        rows = raw_rows(url)
        store.rebuild_projections()
        assert raw_rows(url) == rows
        assert everything(store) == before
        with TranscriptStore.open(url) as other:  # what any other reader of the file sees
            assert everything(other) == before


session_ids = st.sampled_from(SESSIONS)
append_items = st.lists(
    st.one_of(st.none(), st.sampled_from(POOLED_IDS), st.just("pair")), max_size=4
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("start"), session_ids),
        st.tuples(st.just("append"), session_ids, append_items),
        st.tuples(st.just("sync"), session_ids, st.integers(0, 4), st.integers(0, 2)),
        st.tuples(st.just("commit"), session_ids, st.integers(0, 3)),
        st.tuples(st.just("summarize_error"), session_ids),
        st.tuples(st.just("conflict"), session_ids),
        st.tuples(st.just("invalid_replacement"), session_ids),
        st.tuples(st.just("orphaned_tool_result"), session_ids),
        st.tuples(st.just("rewind"), session_ids, st.integers(0, 4)),
        st.tuples(st.just("restore"), session_ids),
        st.tuples(st.just("forget"), session_ids),
        st.just(("reopen",)),
        st.just(("rebuild",)),
    ),
    max_size=30,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations)
def test_after_any_writes_the_views_equal_a_fold_of_the_log_and_a_rebuild_changes_nothing(
    ops: list[tuple],
) -> None:
    directory = Path(tempfile.mkdtemp(prefix="views-property-"))
    run = Run(directory)
    try:
        for op in ops:
            run.do(op)
        run.check()
    finally:
        run.store.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_the_property_covers_every_operation_in_one_long_sequence(tmp_path: Path) -> None:
    """A fixed sequence that takes every branch, so the property never passes vacuously."""
    run = Run(tmp_path)
    try:
        for op in [
            ("append", "s0", [None]),  # before the start: SessionNotFoundError
            ("start", "s0"),
            ("start", "s1"),
            ("start", "s0"),
            ("append", "s0", [None, "p0", "pair", "p0"]),
            ("append", "s1", ["p0", "p1"]),
            ("sync", "s0", 0, 2),
            ("commit", "s0", 2),
            ("sync", "s0", 2, 1),
            ("append", "s0", ["p0"]),
            ("reopen",),
            ("rebuild",),
            ("summarize_error", "s0"),
            ("conflict", "s0"),
            ("invalid_replacement", "s1"),
            ("orphaned_tool_result", "s1"),
            ("rewind", "s1", 2),  # a tool call and its result
            ("sync", "s1", 1, 0),  # a stale list: restores nothing
            ("rewind", "s0", 0),
            ("commit", "s1", 3),
            ("restore", "s1"),
            ("reopen",),
            ("rewind", "s1", 1),
            ("reopen",),
            ("append", "s1", [None]),
            ("commit", "s2", 1),
            ("start", "s2"),
            ("conflict", "s2"),
            ("forget", "s2"),  # erased: every later call on it raises SessionErasedError
            ("append", "s2", ["p0"]),
            ("start", "s2"),
            ("forget", "s2"),
            ("rebuild",),
        ]:
            run.do(op)
        run.check()
        statuses = [c[1:] for model in run.sessions.values() for c in model.compactions]
        assert {failure for _, failure in statuses} == {
            None,
            "summarize_error",
            "conflict",
            "invalid_replacement",
            "orphaned_tool_result",
        }
        assert [s for s, model in run.sessions.items() if model.erased] == ["s2"]
        rewound = [e for m in run.sessions.values() for e in m.history.values() if e["rewound"]]
        assert rewound and any(len(m.history) > len(m.active) for m in run.sessions.values())
    finally:
        run.store.close()
