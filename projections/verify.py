"""Verification: the stored views against an independent fold of the log.

`compare_session` diffs the rows of one session with what `SessionFold` (which shares no code
with the projector) says they must be, and names every difference: a missing, extra,
changed or misordered row.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..domain.transcript import transcript_id
from .fold import HistoryEntry, SessionFold
from .history_columns import ColumnEntry
from .rows import ActiveRow, AttemptRow, HistoryRow, QuarantineRow, SessionRow
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
    """Every difference between a session's view rows and the fold of its events.

    The rows may be read as they are compared (`SessionRows`' iterables are read once, in
    order): they are compared one by one with what the fold expects in their place, and
    none is held, so that a long history takes little memory."""
    if fold is None:
        return _unknown_session(session_id, rows)
    entries = fold.entries
    problems = [
        *_diff_rows(
            session_id,
            "active_messages",
            fold.active_ids,
            lambda key: _expected_active(fold, entries[key]),
            ((row.message_id, _stored_active(fold, row), row.position) for row in rows.active),
        ),
        *_diff_rows(
            session_id,
            "message_history",
            fold.ids(),
            lambda key: _expected_history(fold, entries[key]),
            ((row.message_id, _stored_history(fold, row), row.seq) for row in rows.history),
        ),
        *_diff_rows(
            session_id,
            "compaction_attempts",
            [entry["id"] for entry in fold.compactions],
            {entry["id"]: _expected_attempt(entry) for entry in fold.compactions}.__getitem__,
            ((row.compaction_id, _stored_attempt(fold, row), None) for row in rows.attempts),
        ),
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


def _expected_active(fold: SessionFold, entry: HistoryEntry | ColumnEntry) -> dict[str, Any]:
    return {"role": entry.role, "message": fold.kept(entry)}


def _stored_active(fold: SessionFold, row: ActiveRow) -> dict[str, Any]:
    return {"role": row.role, "message": fold.keep(row.message)}


def _expected_history(fold: SessionFold, entry: HistoryEntry | ColumnEntry) -> dict[str, Any]:
    """A fold entry as its `message_history` row must be (its message as the fold keeps it)."""
    return {
        "role": entry.role,
        "message": fold.kept(entry),
        "active": entry.active,
        "superseded_by": entry.superseded_by,
        "added_by": entry.added_by,
        "appended_at": entry.appended_at,
        "appended_version": entry.appended_version,
        "rewound_version": entry.rewound_version,
        "restored_version": entry.restored_version,
    }


def _stored_history(fold: SessionFold, row: HistoryRow) -> dict[str, Any]:
    """A `message_history` row as `_expected_history` says it."""
    return {
        "role": row.role,
        "message": fold.keep(row.message),
        "active": row.active,
        "superseded_by": row.superseded_by,
        "added_by": row.added_by,
        "appended_at": row.appended_at,
        "appended_version": row.appended_version,
        "rewound_version": row.rewound_version,
        "restored_version": row.restored_version,
    }


def _expected_attempt(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "counts": (len(entry["superseded"]), len(entry["added"]))}


def _stored_attempt(fold: SessionFold, row: AttemptRow) -> dict[str, Any]:
    """A `compaction_attempts` row as `_expected_attempt` says it (its ids as the fold keeps
    them)."""
    entry = row.as_audit_entry()
    return {
        **entry,
        "superseded": fold.keep_ids(entry["superseded"]),
        "added": fold.keep_ids(entry["added"]),
        "counts": (row.superseded_count, row.added_count),
    }


def _diff_rows(
    session_id: str,
    view: str,
    expected: Sequence[str],
    value_of: Callable[[str], Any],
    stored: Iterable[tuple[str, Any, int | None]],
) -> list[Problem]:
    """Every difference between the rows a view must hold — the keys `expected` in order,
    each key's value `value_of(key)` — and its `stored` (key, value, position) rows as they
    are read; then, unless the position is None, positions that are not 1..n.

    While the rows come in the expected order they are matched in step, holding nothing;
    from the first that does not, each is matched by its key (an index of the expected keys
    made then), and the order they came in is kept to be checked.
    """
    duplicates: list[Problem] = []  # a second row of a key, in the order read
    found: list[tuple[int, Problem]] = []  # changed and missing rows, by expected order
    unexpected: dict[str, None] = {}  # keys of rows nothing expects, in the order read
    ordinals: dict[str, int] | None = None  # the expected keys' places, once out of step
    matched = bytearray()  # which expected keys have a row, once out of step
    order = array("q")  # the expected places of the rows read, once out of step
    positions = _Positions()
    in_step = 0  # rows read in step with `expected`
    for key, value, position in stored:
        positions.add(position)
        if ordinals is None and in_step < len(expected) and expected[in_step] == key:
            ordinal, in_step = in_step, in_step + 1
        else:
            if ordinals is None:  # out of step from here
                ordinals = {k: n for n, k in enumerate(expected)}
                matched = bytearray(b"\1" * in_step + b"\0" * (len(expected) - in_step))
                order = array("q", range(in_step))
            place = ordinals.get(key)
            if place is None or matched[place]:
                if place is None and key not in unexpected:
                    unexpected[key] = None
                else:
                    second = Problem(session_id, view, "extra", key, "a second row for it")
                    duplicates.append(second)
                continue
            ordinal, matched[place] = place, 1
            order.append(ordinal)
        want = value_of(key)
        if want != value:
            detail = _difference(want, value)
            found.append((ordinal, Problem(session_id, view, "changed", key, detail)))
    if ordinals is None:
        missing = range(in_step, len(expected))
    else:
        missing = [n for n, seen in enumerate(matched) if not seen]
    found += [(n, Problem(session_id, view, "missing", expected[n])) for n in missing]
    problems = [*duplicates, *(problem for _, problem in sorted(found, key=lambda f: f[0]))]
    problems += [Problem(session_id, view, "extra", key) for key in unexpected]
    if ordinals is not None and list(order) != sorted(order):
        common = [expected[n] for n in sorted(order)]
        stored_order = [expected[n] for n in order]
        detail = f"expected {common}, stored {stored_order}"
        problems.append(Problem(session_id, view, "misordered", "rows", detail))
    return problems + positions.problems(session_id, view)


class _Positions:
    """Checks that the positions of a view's rows, as they are read, are 1..n; holds them
    only from the first that is not."""

    def __init__(self) -> None:
        self.count = 0
        self.unordered: array[int] | None = None
        self.given = False

    def add(self, position: int | None) -> None:
        if position is None:
            return
        self.given = True
        self.count += 1
        if self.unordered is None and position != self.count:
            self.unordered = array("q", range(1, self.count))
        if self.unordered is not None:
            self.unordered.append(position)

    def problems(self, session_id: str, view: str) -> list[Problem]:
        if self.unordered is None:
            return []
        detail = f"not 1..{self.count}: {list(self.unordered)}"
        return [Problem(session_id, view, "misordered", "positions", detail)]


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
        "active_messages": sum(1 for _ in rows.active),
        "message_history": sum(1 for _ in rows.history),
        "compaction_attempts": sum(1 for _ in rows.attempts),
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
            f"{key}: expected {_shown(expected.get(key))}, stored {_shown(stored.get(key))}"
            for key in keys
        )
    return f"expected {_shown(expected)}, stored {_shown(stored)}"


def _shown(value: Any) -> str:
    """A value as a problem's detail says it (a digest in hexadecimal)."""
    return f"digest {value.hex()}" if isinstance(value, bytes) else repr(value)
