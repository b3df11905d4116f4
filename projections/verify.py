"""Verification: the stored views against an independent fold of the log.

`compare_session` diffs the rows of one session with what `SessionFold` (which shares no code
with the projector) says they must be, and names every difference: a missing, extra,
changed or misordered row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import zip_longest
from typing import Any

from ..domain.messages import with_id
from ..domain.transcript import transcript_id
from .fold import HistoryEntry, SessionFold
from .rows import HistoryRow, QuarantineRow, SessionRow
from .views import SessionRows


@dataclass(frozen=True)
class Problem:
    session_id: str | None
    view: str
    kind: str  # missing | extra | changed | misordered | quarantined | unreadable
    key: str  # the row: a message id, a compaction id, a log position, or the session id
    detail: str = ""

    def __str__(self) -> str:
        where = f"session {self.session_id!r}" if self.session_id is not None else "no session"
        text = f"{where}: {self.view}: {self.kind} {self.key}"
        return f"{text} ({self.detail})" if self.detail else text


@dataclass(frozen=True)
class VerifyReport:
    sessions: int
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def compare_session(session_id: str, fold: SessionFold | None, rows: SessionRows) -> list[Problem]:
    """Every difference between a session's view rows and the fold of its events."""
    if fold is None:
        return _unknown_session(session_id, rows)
    expected_active = [(m["id"], {"role": m["role"], "message": m}) for m in fold.active()]
    stored_active = [
        (row.message_id, {"role": row.role, "message": row.message}) for row in rows.active
    ]
    history = fold.entries.values()
    expected_history = partial(map, _expected_history_row, history)  # made on demand
    stored_history = partial(map, _stored_history_row, rows.history)
    expected_attempts = [
        (entry["id"], {**entry, "counts": (len(entry["superseded"]), len(entry["added"]))})
        for entry in fold.compactions
    ]
    stored_attempts = [
        (
            row.compaction_id,
            {**row.as_audit_entry(), "counts": (row.superseded_count, row.added_count)},
        )
        for row in rows.attempts
    ]
    problems = [
        *_diff_list(session_id, "active_messages", expected_active, stored_active),
        *_positions(session_id, "active_messages", [row.position for row in rows.active]),
        *_diff_lazily(session_id, "message_history", expected_history, stored_history),
        *_positions(session_id, "message_history", [row.seq for row in rows.history]),
        *_diff_list(session_id, "compaction_attempts", expected_attempts, stored_attempts),
        *_diff_session(session_id, fold, rows.session),
    ]
    return [*_unreadable(session_id, rows), *_not_unreadable(problems, rows)]


def _unreadable(session_id: str, rows: SessionRows) -> list[Problem]:
    return [
        Problem(session_id, view, "unreadable", key, reason)
        for view, key, reason in rows.unreadable
    ]


def _not_unreadable(problems: list[Problem], rows: SessionRows) -> list[Problem]:
    """The problems but a missing row that is there, unreadable (reported as such), and what
    follows from it: a misordered list, a session row that differs."""
    if not rows.unreadable:
        return problems
    unreadable = {(view, key) for view, key, _ in rows.unreadable}
    views = {view for view, _ in unreadable}
    return [
        problem
        for problem in problems
        if (problem.view, problem.key) not in unreadable
        and not (problem.kind == "misordered" and problem.view in views)
    ]


def quarantine_problems(rows: Sequence[QuarantineRow]) -> list[Problem]:
    return [
        Problem(
            row.session_id,
            "quarantined_events",
            "quarantined",
            f"position {row.position}",
            row.reason,
        )
        for row in rows
    ]


def _expected_history_row(entry: HistoryEntry) -> tuple[str, dict[str, Any]]:
    """A fold entry as its `message_history` row must be (`_diff_list`'s key and value)."""
    return entry.id, {
        "role": entry.message["role"],
        "message": with_id(entry.id, entry.message),
        "active": entry.active,
        "superseded_by": entry.superseded_by,
        "added_by": entry.added_by,
        "appended_at": entry.appended_at,
        "appended_version": entry.appended_version,
        "rewound_version": entry.rewound_version,
        "restored_version": entry.restored_version,
    }


def _stored_history_row(row: HistoryRow) -> tuple[str, dict[str, Any]]:
    """A `message_history` row as `_expected_history_row` says it."""
    return row.message_id, {
        "role": row.role,
        "message": row.message,
        "active": row.active,
        "superseded_by": row.superseded_by,
        "added_by": row.added_by,
        "appended_at": row.appended_at,
        "appended_version": row.appended_version,
        "rewound_version": row.rewound_version,
        "restored_version": row.restored_version,
    }


def _diff_lazily(
    session_id: str,
    view: str,
    expected: Callable[[], Iterable[tuple[str, Any]]],
    stored: Callable[[], Iterable[tuple[str, Any]]],
) -> list[Problem]:
    """`_diff_list` of two lists made on demand: compared pair by pair first, holding none
    of them (a long history's rows as dicts would double its memory), made whole only if
    they differ."""
    pairs = zip_longest(expected(), stored())
    if all(want is not None and want == got for want, got in pairs):
        return []
    return _diff_list(session_id, view, list(expected()), list(stored()))


def _diff_list(
    session_id: str, view: str, expected: list[tuple[str, Any]], stored: list[tuple[str, Any]]
) -> list[Problem]:
    problems: list[Problem] = []
    expected_by_key = dict(expected)
    stored_by_key: dict[str, Any] = {}
    for key, value in stored:
        if key in stored_by_key:
            problems.append(Problem(session_id, view, "extra", key, "a second row for it"))
        stored_by_key[key] = value
    for key, value in expected:
        if key not in stored_by_key:
            problems.append(Problem(session_id, view, "missing", key))
        elif stored_by_key[key] != value:
            problems.append(
                Problem(session_id, view, "changed", key, _difference(value, stored_by_key[key]))
            )
    problems += [
        Problem(session_id, view, "extra", key)
        for key in stored_by_key
        if key not in expected_by_key
    ]
    common = [key for key, _ in expected if key in stored_by_key]
    stored_order = [
        key for key in dict.fromkeys(key for key, _ in stored) if key in expected_by_key
    ]
    if common != stored_order:
        problems.append(
            Problem(
                session_id, view, "misordered", "rows", f"expected {common}, stored {stored_order}"
            )
        )
    return problems


def _positions(session_id: str, view: str, positions: list[int]) -> list[Problem]:
    if positions == list(range(1, len(positions) + 1)):
        return []
    return [
        Problem(
            session_id, view, "misordered", "positions", f"not 1..{len(positions)}: {positions}"
        )
    ]


def _diff_session(session_id: str, fold: SessionFold, row: SessionRow | None) -> list[Problem]:
    if row is None:
        return [Problem(session_id, "sessions", "missing", session_id)]
    expected = {
        "transcript_id": transcript_id(session_id).hex,
        "source": fold.source,
        "model": fold.model,
        "parent_id": fold.parent_id,
        "metadata": fold.metadata,
        "started_at": fold.started_at,
        "last_event_at": fold.last_event_at,
        "version": fold.version,
        "message_count": len(fold.entries),
        "active_count": len(fold.active_ids),
        "compactions_committed": sum(entry["status"] == "committed" for entry in fold.compactions),
        "compactions_failed": sum(entry["status"] == "failed" for entry in fold.compactions),
        "erased_at": fold.erased_at,
        "rewound_count": sum(e.rewound_version is not None for e in fold.entries.values()),
        "state": fold.state,
        "context_version": fold.context_version,
    }
    stored = {key: getattr(row, key) for key in expected}
    if stored == expected:
        return []
    return [Problem(session_id, "sessions", "changed", session_id, _difference(expected, stored))]


def _unknown_session(session_id: str, rows: SessionRows) -> list[Problem]:
    counts = {
        "sessions": int(rows.session is not None),
        "active_messages": len(rows.active),
        "message_history": len(rows.history),
        "compaction_attempts": len(rows.attempts),
    }
    return [
        Problem(
            session_id,
            view,
            "extra",
            session_id,
            f"{count} row(s) of a session the log does not have",
        )
        for view, count in counts.items()
        if count
    ]


def _difference(expected: Any, stored: Any) -> str:
    if isinstance(expected, dict) and isinstance(stored, dict):
        keys = [key for key in {**expected, **stored} if expected.get(key) != stored.get(key)]
        return "; ".join(
            f"{key}: expected {expected.get(key)!r}, stored {stored.get(key)!r}" for key in keys
        )
    return f"expected {expected!r}, stored {stored!r}"
