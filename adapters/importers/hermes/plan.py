"""Planning the import of one Hermes session: which messages, compactions and failed attempts
its rows evidence, in order. Pure: no store and no I/O.

Walking the rows in id order, each row is one of:
- a *copy*: its role, content, tool fields and timestamp repeat an earlier row's. Hermes
  re-inserts the rows a compaction carries (head and tail) as new rows; a copy is the same
  message as its original and is never imported twice;
- a *summary* (`_compressed_summary`, or content starting `[CONTEXT COMPACTION` /
  `[CONTEXT SUMMARY]:`), opening a *block*: the copies just before it (the carried head, a
  prefix of the active messages), the summary, the copies just after it (the carried tail, a
  suffix of the active messages);
- a new message.

A block is a compaction whose snapshot is the active list planned so far:
- *committed* when no earlier row of any snapshot message is still live (Hermes archives
  every row of the context it compacts) and the originals of its tail are hidden: the
  summary replaces exactly the messages neither carried in the head nor in the tail;
- *failed* when the block carries copies while the snapshot's rows are still live (the
  failed-commit bug, hermes-agent#99477, re-inserted the uncommitted list on top of the live
  rows), or were archived only later, by a compaction that did commit (the originals of
  the failed block's tail are then archived, not hidden). The attempt is recorded as
  failed; its copies and summary are not imported;
- otherwise (no copies, rows still live: a rotation child's handoff summary) the summary is
  an ordinary message.
A hidden row (neither live nor archived) that no later row copies was rewound (/undo): it is
imported, then superseded by a compaction that keeps every other message.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .... import InvalidMessageError
from ....domain.compaction import CompactionRejected, check_tool_pairing, pairing_facts
from ....domain.messages import split_id
from .reader import HermesRow, HermesSession
from .steps import Append, Compact, Fail, SessionPlan, message_id, row_ranges


def plan_session(session: HermesSession) -> SessionPlan:
    return _Planner(session).plan()


@dataclass
class _Block:
    summary: HermesRow
    head: list[tuple[HermesRow, str]]
    run: list[tuple[HermesRow, str]] = field(default_factory=list)  # copies after the summary


class _Planner:
    def __init__(self, session: HermesSession) -> None:
        self.session = session
        self.result = SessionPlan(notes=list(session.problems))
        self.active: list[str] = []
        self.contents: dict[str, dict[str, Any]] = {}
        self.rows_of: dict[str, list[HermesRow]] = defaultdict(list)
        self.first: dict[tuple[Any, ...], str] = {}
        self.copied = {i for i, n in Counter(r.identity for r in session.rows).items() if n > 1}
        self.pending: list[tuple[HermesRow, str]] = []
        self.block: _Block | None = None
        self.rewound: list[str] = []
        self.calls: dict[str, str] = {}
        self.answers: dict[str, str] = {}
        self.carried: list[int] = []
        self.strays: list[int] = []
        self.failed_blocks: list[int] = []

    def plan(self) -> SessionPlan:
        for row in self.session.rows:
            self.step(row)
        self.close_block()
        self.drop_strays(self.pending)
        self.flush_rewind()
        self.summarise()
        return self.result

    def step(self, row: HermesRow) -> None:
        original = self.first.get(row.identity)
        rewound = (
            original is None and not row.summary and row.hidden and row.identity not in self.copied
        )
        if not rewound:
            self.flush_rewind()
        if original is not None:
            self.rows_of[original].append(row)
            if self.block is not None:
                self.block.run.append((row, original))
            else:
                self.pending.append((row, original))
            return
        self.close_block()
        if row.summary:
            self.block = _Block(row, self.pending)
            self.pending = []
            return
        self.drop_strays(self.pending)
        if self.append(row) and rewound:
            self.rewound.append(self.first[row.identity])

    def append(self, row: HermesRow) -> bool:
        content = self.valid(row)
        if content is None:
            return False
        new_id = message_id(self.session.id, row.row_id)
        self.first[row.identity] = new_id
        self.rows_of[new_id].append(row)
        self.contents[new_id] = content
        self.active.append(new_id)
        self.note_pairing(new_id, content)
        self.result.units.append(Append({"id": new_id, **content}))
        self.result.messages += 1
        return True

    def valid(self, row: HermesRow) -> dict[str, Any] | None:
        """The row's message content, if the store can take it (problems become notes)."""
        self.result.notes.extend(row.problems)
        try:
            return split_id(row.message)[1]
        except InvalidMessageError as error:
            self.result.notes.append(f"row {row.row_id} not imported: {error}")
            return None

    # -- compaction blocks -----------------------------------------------------------------

    def close_block(self) -> None:
        block, self.block = self.block, None
        if block is None:
            return
        head, strays = _split_head(block.head, self.active)
        tail, rest = _split_tail(block.run, self.active)
        self.drop_strays(strays)
        self.pending = rest
        snapshot = list(self.active)
        before = head[0][0].row_id if head else block.summary.row_id  # the block's first row
        earlier = {m: [r for r in self.rows_of[m] if r.row_id < before] for m in snapshot}
        live = any(r.active for rows in earlier.values() for r in rows)
        # A commit hides the originals of its tail; a failed attempt's stay live, or are
        # archived by a later compaction that did commit ("swept").
        swept = any(not earlier[m][-1].hidden for _, m in tail)
        if snapshot and not live and not swept:
            self.commit(block.summary, snapshot, head, tail)
        elif (head or tail) and (live or swept):
            self.fail(block, snapshot, head, tail)
        else:
            self.drop_strays([*head, *tail])
            self.append(block.summary)

    def commit(
        self,
        summary: HermesRow,
        snapshot: list[str],
        head: list[tuple[HermesRow, str]],
        tail: list[tuple[HermesRow, str]],
    ) -> None:
        content = self.valid(summary)
        if content is None:
            return
        summary_id = message_id(self.session.id, summary.row_id)
        kept = {m for _, m in [*head, *tail]}
        superseded = [m for m in snapshot if m not in kept]
        order = [m for _, m in head] + [summary_id] + [m for _, m in tail]
        commits = self.pairing_allows(order, superseded, summary_id, content)
        contents = {**self.contents, summary_id: content}
        self.result.units.append(
            Compact(
                reason=f"Hermes in-place compaction (summary row {summary.row_id})",
                snapshot=snapshot,
                replacement=[content if m == summary_id else m for m in order],
                superseded=superseded,
                summary_id=summary_id,
                commits=commits,
                tokens_before=_tokens(contents, snapshot),
                tokens_after=_tokens(contents, order),
            )
        )
        if not commits:
            self.result.failed += 1
            self.result.duplicates_dropped += len(head) + len(tail)
            self.result.notes.append(
                f"the compaction with summary row {summary.row_id} would leave a tool result "
                "without its call; the store records it as failed (orphaned_tool_result)"
            )
            return
        self.first[summary.identity] = summary_id
        self.rows_of[summary_id].append(summary)
        self.contents[summary_id] = content
        self.note_pairing(summary_id, content)
        self.forget_pairing(superseded)
        self.active = order
        self.result.committed += 1
        self.result.messages += 1
        self.carried += [r.row_id for r, _ in [*head, *tail]]

    def fail(
        self,
        block: _Block,
        snapshot: list[str],
        head: list[tuple[HermesRow, str]],
        tail: list[tuple[HermesRow, str]],
    ) -> None:
        summary = block.summary.row_id
        copies = [r.row_id for r, _ in [*head, *tail]]
        kept = {m for _, m in [*head, *tail]}
        superseded = [m for m in snapshot if m not in kept]
        originals = [self.rows_of[m][0].row_id for m in superseded]
        error = (
            "Hermes could not commit this in-place compaction and re-inserted its uncommitted "
            "list on top of the live rows (the failed-commit bug, hermes-agent#99477): "
            f"{_carried('head', head)}, summary row {summary}, {_carried('tail', tail)}. "
            f"Committed, it would have superseded {len(superseded)} of the {len(snapshot)} "
            f"active messages (rows {row_ranges(originals) or 'none'}). "
            "Repaired on import: the copies and the summary were not imported."
        )
        if self.session.last_compression_error:
            error += (
                " The session's last recorded compaction error: "
                f"{self.session.last_compression_error}"
            )
        self.result.units.append(
            Fail(
                reason=f"Hermes in-place compaction (summary row {summary})",
                snapshot=snapshot,
                error=error,
            )
        )
        self.result.failed += 1
        self.result.duplicates_dropped += len(copies)
        self.result.repaired = True
        self.failed_blocks.append(summary)

    def flush_rewind(self) -> None:
        if not self.rewound:
            return
        gone, self.rewound = set(self.rewound), []
        snapshot = list(self.active)
        order = [m for m in snapshot if m not in gone]
        superseded = [m for m in snapshot if m in gone]
        commits = self.pairing_allows(order, superseded, None, None)
        rows = row_ranges(self.rows_of[m][0].row_id for m in superseded)
        self.result.units.append(
            Compact(
                reason=f"Hermes rewind (rows {rows} undone)",
                snapshot=snapshot,
                replacement=list(order),
                superseded=superseded,
                summary_id=None,
                commits=commits,
            )
        )
        if commits:
            self.active = order
            self.forget_pairing(superseded)
            self.result.committed += 1
            self.result.notes.append(
                f"rows {rows} were rewound in Hermes: imported, then superseded"
            )
        else:
            self.result.failed += 1
            self.result.notes.append(
                f"the rewind of rows {rows} would leave a tool result without its call; "
                "the store records it as failed (orphaned_tool_result)"
            )

    def drop_strays(self, copies: Sequence[tuple[HermesRow, str]]) -> None:
        if copies:
            self.strays += [row.row_id for row, _ in copies]
            self.result.duplicates_dropped += len(copies)
            self.result.repaired = True
        if copies is self.pending:
            self.pending = []

    # -- tool-call pairing, as the store checks it -----------------------------------------

    def note_pairing(self, message: str, content: dict[str, Any]) -> None:
        calls, answers = pairing_facts(message, content)
        self.calls.update(calls)
        self.answers.update(answers)

    def forget_pairing(self, gone: Iterable[str]) -> None:
        removed = set(gone)
        self.calls = {call: m for call, m in self.calls.items() if m not in removed}
        self.answers = {m: call for m, call in self.answers.items() if m not in removed}

    def pairing_allows(
        self,
        order: list[str],
        superseded: list[str],
        new_id: str | None,
        new: dict[str, Any] | None,
    ) -> bool:
        calls, answers = dict(self.calls), dict(self.answers)
        if new_id is not None and new is not None:
            new_calls, new_answers = pairing_facts(new_id, new)
            calls.update(new_calls)
            answers.update(new_answers)
        try:
            check_tool_pairing(order, calls, answers, superseded)
        except CompactionRejected:
            return False
        return True

    # -- the report ------------------------------------------------------------------------

    def summarise(self) -> None:
        result = self.result
        result.active = len(self.active)
        if self.failed_blocks:
            result.notes.append(
                f"{len(self.failed_blocks)} failed in-place compaction commits "
                "(hermes-agent#99477) recorded as failed attempts; their "
                f"{result.duplicates_dropped - len(self.strays)} re-inserted copies and "
                f"{len(self.failed_blocks)} uncommitted summaries (rows "
                f"{row_ranges(self.failed_blocks)}) were not imported"
            )
        if self.strays:
            result.notes.append(
                f"{len(self.strays)} duplicate rows (copies of rows already imported) "
                f"were not imported: rows {row_ranges(self.strays)}"
            )
        if self.carried:
            result.notes.append(
                f"{len(self.carried)} rows carried past a compaction are the same messages "
                f"as their originals: rows {row_ranges(self.carried)}"
            )
        meta = self.session.metadata.get("session_meta", [])
        if meta:
            result.notes.append(f"{len(meta)} session_meta rows kept as session metadata")


def _split_head(
    copies: list[tuple[HermesRow, str]], active: list[str]
) -> tuple[list[tuple[HermesRow, str]], list[tuple[HermesRow, str]]]:
    """(head, strays): the longest run ending the copies that repeats the active list's start."""
    for start in range(len(copies) + 1):
        ids = [m for _, m in copies[start:]]
        if ids == active[: len(ids)]:
            return copies[start:], copies[:start]
    return [], copies  # unreachable: the empty run always matches


def _split_tail(
    copies: list[tuple[HermesRow, str]], active: list[str]
) -> tuple[list[tuple[HermesRow, str]], list[tuple[HermesRow, str]]]:
    """(tail, rest): the longest run starting the copies that repeats the active list's end."""
    for end in range(len(copies), 0, -1):
        ids = [m for _, m in copies[:end]]
        if end <= len(active) and ids == active[len(active) - end :]:
            return copies[:end], copies[end:]
    return [], copies


def _carried(part: str, copies: list[tuple[HermesRow, str]]) -> str:
    if not copies:
        return f"no {part}"
    rows = row_ranges(r.row_id for r, _ in copies)
    return f"{part} rows {rows} (copies of {row_ranges(_row(m) for _, m in copies)})"


def _row(planned_id: str) -> int:
    return int(planned_id.rsplit("-", 1)[1])


def _tokens(contents: dict[str, dict[str, Any]], ids: Sequence[str]) -> int | None:
    counts = [contents[m].get("token_count") for m in ids]
    if not counts or not all(type(count) is int and count >= 0 for count in counts):
        return None
    return sum(counts)  # type: ignore[arg-type]
