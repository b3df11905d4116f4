"""What the acknowledged calls of a killed writer prove, and the checks a reopened store must
pass (tests/processes/test_crash_safety.py and test_torn_writes.py; the writers are
support/programs/crash_writer.py).

A writer prints an `intent` line before a call, an `ack` line once the call returned and a
`state` line with what it read back; `Ledger.record` takes in what a killed writer printed,
`Ledger.check` reopens the store and checks it.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from .processes import Child, Spawn, program


def start_writer(spawn: Spawn, name: str, *args: str) -> Child:
    """Start a crash_writer.py program: start_writer(spawn, "run-0", "write", url, …)."""
    return spawn(name, program("crash_writer.py", *args), decode=json.loads)


@dataclass
class Ledger:
    """What acknowledged calls prove about one session, across killed runs."""

    session_id: str
    started: bool = False
    messages: dict[str, dict] = field(default_factory=dict)  # acked appends, by id
    append_order: list[str] = field(default_factory=list)
    compactions: dict[str, dict] = field(default_factory=dict)  # acked, by id
    version: int = 0  # of the last state line (or of the last check)
    active: list[str] = field(default_factory=list)
    in_flight: dict | None = None  # the last intent not followed by a state line

    def record(self, lines: list[dict]) -> None:
        """Take in what a killed child printed."""
        self.in_flight = None
        for line in lines:
            if "ready" in line:
                continue
            if "intent" in line:
                self.in_flight = line
            elif "ack" in line:
                if "messages" in line:
                    for message in line["messages"]:
                        if message["id"] not in self.messages:
                            self.append_order.append(message["id"])
                        self.messages[message["id"]] = message
                elif line["ack"] == "compact":
                    self.compactions[line["id"]] = line
            elif "state" in line:
                self.in_flight = None
                self.started = True
                self.version, self.active = line["state"], line["active"]

    def check(self, url: str) -> None:
        """Reopen the store and check what a killed writer must leave behind."""
        from transcripts import SessionNotFoundError, TranscriptStore

        path = url.removeprefix("sqlite:///")
        with closing(sqlite3.connect(path)) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with TranscriptStore.open(url) as store:
            if not self.started:
                try:
                    store.active(self.session_id)
                except SessionNotFoundError:
                    return
            check_session(store, self)
            report = store.verify_projections()
            assert report.ok, [str(problem) for problem in report.problems]
            for status in store.projection_status():  # the search index lags until searched
                assert status.position == status.head or status.view == "message_search", status
            self.started = True
            self.version = len(store.events(self.session_id))
            self.active = [m["id"] for m in store.active(self.session_id)]


def check_session(store: Any, ledger: Ledger) -> None:
    session_id = ledger.session_id
    history = store.history(session_id)
    by_id = {entry["id"]: entry for entry in history}
    active = store.active(session_id)
    active_ids = [m["id"] for m in active]
    # No id twice.
    assert len(by_id) == len(history), "an id is twice in the history"
    assert len(set(active_ids)) == len(active_ids), "an id is twice in the active list"
    assert set(active_ids) == {entry["id"] for entry in history if entry["active"]}
    # Every append that returned is there, with its content.
    missing = [i for i in ledger.messages if i not in by_id]
    assert not missing, f"acknowledged messages lost: {missing}"
    for message_id, message in ledger.messages.items():
        assert by_id[message_id]["message"] == message
    # The log up to the last acknowledged state is what the writer saw then.
    events = store.events(session_id)
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    if ledger.version:
        assert len(events) >= ledger.version
        assert [m["id"] for m in store.active_at(session_id, ledger.version)] == ledger.active
    # After it, at most the call in flight, whole: an append's events or one compaction event.
    later = events[ledger.version :] if ledger.version else []
    flight = ledger.in_flight
    if later:
        assert flight is not None, f"events after the last acknowledged state: {later}"
        if flight["intent"] == "append":
            assert {e["type"] for e in later} == {"MessageAppended"}
            assert len(later) == flight["new"], "an append was stored in part"
            assert set(flight["ids"]) <= {e["data"]["message_id"] for e in later}
        elif flight["intent"] == "compact":
            assert len(later) == 1, "a compaction wrote more than one event"
            assert later[0]["type"] in ("CompactionCommitted", "CompactionFailed")
            assert flight["id"] in (None, later[0]["data"]["compaction_id"])
        else:
            raise AssertionError(f"a {flight['intent']} wrote events: {later}")
    # No compaction half applied; the audit is the log's.
    audit = store.compactions(session_id)
    settled = [e for e in events if e["type"] in ("CompactionCommitted", "CompactionFailed")]
    assert [entry["id"] for entry in audit] == [e["data"]["compaction_id"] for e in settled]
    later_supersession = {}
    for entry, event in zip(audit, settled, strict=True):
        data = event["data"]
        assert entry["version"] == event["version"]
        if event["type"] == "CompactionFailed":
            assert entry["status"] == "failed" and entry["added"] == []
            assert entry["superseded"] == data["would_supersede"]
            continue
        assert entry["status"] == "committed"
        assert len(entry["superseded"]) == data["replaced"] - len(data["kept"])
        assert not set(entry["superseded"]) & set(data["kept"])
        assert entry["added"] == [new["id"] for new in data["added"]]
        for message_id in entry["superseded"]:
            assert by_id[message_id]["active"] is False
            assert by_id[message_id]["superseded_by"] == entry["id"]
            later_supersession[message_id] = entry["version"]
        for new in data["added"]:
            assert by_id[new["id"]]["added_by"] == entry["id"]
            assert by_id[new["id"]]["message"] == {"id": new["id"], **new["message"]}
        for message_id in data["order"]:
            assert message_id in by_id
    for entry in audit:
        if entry["status"] == "committed":
            for message_id in entry["added"]:
                still = by_id[message_id]["active"]
                superseded_after = later_supersession.get(message_id, 0) > entry["version"]
                assert still or superseded_after, f"{message_id} of {entry['id']} vanished"
    # Every acknowledged compaction is in the audit as it was acknowledged.
    by_compaction = {entry["id"]: entry for entry in audit}
    for compaction_id, ack in ledger.compactions.items():
        entry = by_compaction[compaction_id]
        assert entry["status"] == ("committed" if ack["committed"] else "failed")
        if ack["committed"]:
            assert entry["superseded"] == ack["superseded"]
            assert entry["added"] == ack["added"]
        else:
            assert entry["failure"] == ack["failure"]
