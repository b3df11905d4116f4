"""Planning the import of one Hermes session: which messages, compactions and failed attempts
its rows evidence, in order. Pure: no store and no I/O.

Copies are recognised by what they are, never by when they were written: Hermes stamps the
time of the write on a copy (or the stored time, in a resumed session), so timestamps prove
nothing. What a compaction writes has a shape: one burst of rows holding copies of the
first messages of the active context (the *head*), a summary row, and copies of its last
messages (the *tail*; the first of them may carry the summary merged into it). A committed
in-place compaction writes that burst after archiving the live rows; the failed-commit bug
(hermes-agent#99477) flushes the same list on top of the live rows. So, walking the rows in
id order with the active context planned so far:

- a run of rows repeating the start of the active context, content for content, is held
  back: it is a head if a summary row follows it, else it is new messages after all;
- a summary row opens a *block*: the held-back head, the summary, and the longest run of
  rows after it repeating the end of the active context (the tail; rows after the tail are
  new messages);
- a block whose context still has a live row failed (a commit archives every live row); one
  whose own rows are live committed; one a later commit archived is told by its rows' write
  times (`evidence`). A failed block is recorded as a failed attempt whose audit lists only
  what its result would have superseded, and its copies and summary are not imported (copies
  of that summary, found later in a head or a tail, neither). A committed one's summary
  supersedes exactly the messages neither carried in the head nor in the tail;
- a summary row with no copies is a rotation child's handoff (an ordinary message) where the
  rows before it repeat the parent's first ones, else a failed commit that wrote only its
  summary (hermes-agent 0.18.0);
- any other row is a new message, however much it resembles an earlier one: a user saying
  "ok" twice says it twice.

A hidden row (neither live nor archived) was undone (/undo) unless the next compaction
carries it in its tail: its message (a new one, imported where it was written, or the one a
hidden copy carries) is taken out of the context by a rewind (a `Rewound` event, no
compaction). Undo removes the last turn, and so does the plan: each run of hidden rows is
rewound before the next live row is appended or the next compaction commits, so its messages
are always the tail of the active context (hidden copies whose messages are not are kept, in
doubt). Two undos with no live row between them leave one run, and are one rewind.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .... import InvalidMessageError, TranscriptError
from ....domain.messages import split_id
from ....domain.rewind import taken_out
from .blocks import Block, Tail, match_tail, same_burst
from .evidence import Verdict, judge
from .pairing import Pairing
from .reader import HermesSession
from .report import describe_failure, describe_lone_failure, describe_stranded_head, summarise
from .rows import HermesRow
from .steps import Append, Compact, Fail, Rewind, SessionPlan, message_id, row_ranges


def plan_session(session: HermesSession) -> SessionPlan:
    return _Planner(session).plan()


class _Planner:
    def __init__(self, session: HermesSession) -> None:
        self.session = session
        self.rows = session.rows
        self.result = SessionPlan(notes=list(session.problems))
        self.active: list[str] = []
        self.contents: dict[str, dict[str, Any]] = {}
        self.identity: dict[str, str] = {}
        self.rows_of: dict[str, list[HermesRow]] = defaultdict(list)
        self.pending: list[HermesRow] = []  # held back: maybe the head of a block
        self.uncommitted: set[str] = set()  # identities of summaries that never committed
        self.rewound: dict[str, list[int]] = {}  # hidden since the last live row: id -> rows
        self.pairing = Pairing()
        self.handoff_seen = False

    def plan(self) -> SessionPlan:
        index = 0
        while index < len(self.rows):
            index = self.step(index)
        self.settle(None)
        self.flush_rewind()
        self.result.active = len(self.active)
        summarise(self.result, self.session)
        return self.result

    def step(self, index: int) -> int:
        row = self.rows[index]
        if row.identity in self.uncommitted:  # a copy of a summary that never committed
            self.result.stray_copies.append(row.row_id)
            return index + 1
        if row.summary and not self.extends_head(row):
            return self.block(index)
        if not self.extends_head(row):
            self.settle(row)
        if self.extends_head(row):
            self.pending.append(row)
        else:
            self.new_message(row)
        return index + 1

    # -- held-back rows --------------------------------------------------------------------

    def extends_head(self, row: HermesRow) -> bool:
        position = len(self.pending)
        return position < len(self.active) and row.identity == self.identity[self.active[position]]

    def settle(self, row: HermesRow | None) -> None:
        """The held-back rows that no longer repeat the context's start with `row` are new
        messages, oldest first."""
        while self.pending:
            self.new_message(self.pending.pop(0))
            if row is not None and self.run_matches([*self.pending, row]):
                return

    def run_matches(self, rows: Sequence[HermesRow]) -> bool:
        return len(rows) <= len(self.active) and all(
            r.identity == self.identity[m] for r, m in zip(rows, self.active, strict=False)
        )

    # -- messages --------------------------------------------------------------------------

    def new_message(self, row: HermesRow, planned: str | None = None) -> str | None:
        if not row.hidden:
            self.flush_rewind()
        content = self.valid(row, row.message)
        if content is None:
            return None
        new_id = planned or message_id(self.session.id, row.row_id)
        self.remember(new_id, row, content)
        self.active.append(new_id)
        self.result.units.append(Append({"id": new_id, **content}))
        self.result.messages += 1
        if row.hidden:
            self.rewound[new_id] = [row.row_id]
        return new_id

    def remember(self, new_id: str, row: HermesRow, content: dict[str, Any]) -> None:
        self.identity[new_id] = row.identity
        self.rows_of[new_id].append(row)
        self.contents[new_id] = content
        self.pairing.remember(new_id, content)

    def valid(self, row: HermesRow, message: dict[str, Any]) -> dict[str, Any] | None:
        """The message's content, if the store can take it (problems become notes)."""
        self.result.notes.extend(row.problems)
        try:
            return split_id(message)[1]
        except InvalidMessageError as error:
            self.result.notes.append(f"row {row.row_id} not imported: {error}")
            return None

    # -- compaction blocks -----------------------------------------------------------------

    def block(self, index: int) -> int:
        summary = self.rows[index]
        head = self.head_of(summary, self.pending)
        self.pending = []
        tail, after = self.match(index, len(head))
        while self.rewound and not set(self.rewound) <= set(tail.ids):
            self.flush_rewind()  # rewound before the compaction: the head may repeat less now
            head = self.head_of(summary, head)
            tail, after = self.match(index, len(head))
        block = Block(summary, head, [self.active[i] for i in range(len(head))], tail)
        if not block.copies:
            self.lone(summary)
            return index + 1
        snapshot = list(self.active)
        summary_id = None
        failed = self.verdict(block, snapshot) is Verdict.FAILED
        if failed:
            self.fail(block, snapshot)  # it carries nothing: rows hidden before it stay rewound
        else:
            self.rewound = {}  # kept by the tail: the originals of carried rows, not rewound
            summary_id = self.commit(block, snapshot)
        self.undone_copies(block, summary_id, archived_nothing=failed)
        if summary.original is not None and not block.merged_kept:
            self.new_message(summary.original)  # the merged tail message, first written here
        for row in tail.skipped:
            self.result.stray_copies.append(row.row_id)
        return after

    def head_of(self, summary: HermesRow, rows: list[HermesRow]) -> list[HermesRow]:
        """The held-back rows that are the summary's head; the others are new messages.

        Head copies share the summary's state (`blocks.same_burst`): a row before them that a
        commit archived while they stayed live is a message, not a copy."""
        head = list(rows)
        while head and (not same_burst(head[0], summary) or not self.run_matches(head)):
            self.new_message(head.pop(0))
        return head

    def match(self, index: int, floor: int) -> tuple[Tail, int]:
        return match_tail(self.rows, index, self.active, self.identity, self.uncommitted, floor)

    def verdict(self, block: Block, snapshot: list[str]) -> Verdict:
        """Whether the block committed (see `evidence`); a note when its stamps told."""
        verdict, by_stamps = judge(block, snapshot, self.rows_of)
        row = block.summary.row_id
        if not by_stamps:
            return verdict
        if verdict is Verdict.UNKNOWN:
            self.result.doubts.append(
                f"the compaction with summary row {row} had its rows archived by a later "
                "compaction and they carry no write times of their own, so the file cannot "
                "tell whether it committed; imported as committed (the context Hermes went on "
                "with)"
            )
        else:
            self.result.stamped.setdefault(verdict.value, []).append(row)
        return verdict

    def lone(self, summary: HermesRow) -> None:
        """A summary row with no copies around it: a rotation child's handoff (its first
        summary, after rows repeating the parent's first ones); one not archived after archived
        rows (a commit's, whose copies were not found), in doubt; else a failed commit that
        left only its summary (hermes-agent 0.18.0)."""
        before = [self.identity[m] for m in self.active]
        if not self.active or (
            self.session.parent_id is not None
            and not self.handoff_seen
            and before == self.session.parent_head[: len(before)]
        ):
            self.handoff_seen = True
            self.ordinary(summary)
            return
        if not summary.archived and any(self.rows_of[m][-1].archived for m in self.active):
            self.result.doubts.append(  # a commit's, whose copies an undo hid, say
                f"row {summary.row_id} is a compaction summary after archived rows, but no row "
                "around it repeats the context; kept as a message"
            )
            self.ordinary(summary)
            return
        error = describe_lone_failure(summary, self.session.last_compression_error)
        self.failed(summary, list(self.active), error, None)
        self.result.lone_summaries.append(summary.row_id)
        if summary.original is not None:
            self.new_message(summary.original)  # the tail message it was merged into: new

    def ordinary(self, summary: HermesRow) -> None:
        """A summary kept as a message: a rotation child's handoff, or a session's first row."""
        if summary.original is None:
            self.new_message(summary)
            return
        summary_id = message_id(self.session.id, summary.row_id) + ":summary"
        self.new_message(replace(summary, message=summary.summary_message()), summary_id)
        self.new_message(summary.original)

    def commit(self, block: Block, snapshot: list[str]) -> str | None:
        """Plan the block's commit; the summary's planned id if the store commits it."""
        summary = block.summary
        content = self.valid(summary, summary.summary_message())
        if content is None:
            return None
        summary_id = message_id(self.session.id, summary.row_id) + ":summary"
        order = [*block.head_ids, summary_id, *block.tail.ids]
        superseded = [m for m in snapshot if m not in set(block.kept)]
        commits = self.pairing.allows(order, superseded, summary_id, content)
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
            self.result.copies_dropped += [
                r.row_id for r in block.copies if r is not summary.original
            ]
            self.result.notes.append(
                f"the compaction with summary row {summary.row_id} would leave a tool result "
                "without its call; the store records it as failed (orphaned_tool_result)"
            )
            return None
        for row, kept in zip(block.copies, block.kept, strict=True):
            self.rows_of[kept].append(row if row is not summary.original else summary)
        self.remember(summary_id, summary, content)
        self.pairing.forget(superseded)
        self.active = order
        self.result.committed += 1
        self.result.messages += 1
        self.result.carried += [row.row_id for row in block.copies]
        if summary.original is not None:
            self.result.merged.append(summary.row_id)
        return summary_id

    def fail(self, block: Block, snapshot: list[str]) -> None:
        summary = block.summary
        content = summary.summary_message()
        kept = set(block.kept)
        superseded = [m for m in snapshot if m not in kept]
        first_row = {m: rows[0].row_id for m, rows in self.rows_of.items()}
        error = describe_failure(
            block,
            len(snapshot),
            [first_row[m] for m in superseded],
            first_row,
            self.session.last_compression_error,
        )
        self.failed(summary, snapshot, error, [*block.head_ids, content, *block.tail.ids])
        self.result.copies_dropped += [r.row_id for r in block.copies if r is not summary.original]
        self.result.doubts += describe_stranded_head(block)

    def failed(
        self,
        summary: HermesRow,
        snapshot: list[str],
        error: str,
        replacement: list[str | dict[str, Any]] | None,
    ) -> None:
        """Plan a failed attempt; its summary (and any copy of it) is never a message."""
        reason = f"Hermes in-place compaction (summary row {summary.row_id})"
        self.result.units.append(Fail(reason, snapshot, error, replacement))
        self.uncommitted.add(summary.identity)
        self.result.failed += 1
        self.result.failed_blocks.append(summary.row_id)

    # -- rewinds ---------------------------------------------------------------------------

    def undone_copies(
        self, block: Block, summary_id: str | None, *, archived_nothing: bool
    ) -> None:
        """Copies in the block that an undo hid since: their messages, the end of the context,
        are rewound with the hidden rows after them (unless a later compaction carries them).
        Without a commit (`summary_id` None) only the tail is in the context: the summary is
        not imported, and hidden head copies carry messages at its start (a doubt). If it
        `archived_nothing` (failed in Hermes), a message whose original row the undo left is
        still in Hermes' context: nothing of it is rewound."""
        carried = list(zip(block.tail.rows, block.tail.ids, strict=True))
        if summary_id is not None:
            head = zip(block.head, block.head_ids, strict=True)
            carried = [*head, (block.summary, summary_id), *carried]
        hidden = [(row, m) for row, m in carried if row.hidden]
        # A commit that failed in Hermes archived nothing: a message whose earlier row the undo
        # left alone (live, or archived by a later commit) stays in Hermes' context.
        still_live = [
            (row, m)
            for row, m in hidden
            if archived_nothing and any(not r.hidden for r in self.rows_of[m])
        ]
        if still_live:
            self.result.notes.append(
                f"rows {row_ranges(row.row_id for row, _ in still_live)} are copies an undo "
                "hid while the rows they copy stay live: their messages stay in the context"
            )
            hidden = [pair for pair in hidden if pair not in still_live]
        ids = [m for _, m in hidden]
        head_out = summary_id is None and any(row.hidden for row in block.head)
        if (
            not head_out
            and carried[len(carried) - len(hidden) :] == hidden
            and self.active[len(self.active) - len(ids) :] == ids
        ):
            for row, m in hidden:
                self.rewound.setdefault(m, []).append(row.row_id)
            return
        rows = [r.row_id for r in [block.summary, *block.copies] if r.hidden]
        self.result.doubts.append(
            f"rows {row_ranges(rows)} are copies an undo hid, but the messages they carry are "
            "not the end of the context; kept in it"
        )

    def flush_rewind(self) -> None:
        """Rewind the messages of the rows hidden since the last live one: the context's tail."""
        if not self.rewound:
            return
        kept = self.active[: len(self.active) - len(self.rewound)]
        gone = self.active[len(kept) :]
        assert set(gone) == set(self.rewound), "a rewind takes out the context's tail"
        rows = row_ranges(row for rows in self.rewound.values() for row in rows)
        self.rewound = {}
        try:
            taken_out(self.active, gone, self.pairing.calls, self.pairing.answers)
        except TranscriptError as error:
            self.result.doubts.append(
                f"rows {rows} were undone in Hermes, but the store cannot take their messages "
                f"out of the context ({error}); kept in it"
            )
            return
        self.result.units.append(Rewind(f"Hermes rewind (rows {rows} undone)", gone))
        self.active = kept
        self.pairing.forget(gone)
        self.result.rewinds += 1
        self.result.notes.append(
            f"rows {rows} were undone in Hermes: their messages are rewound, kept in the history"
        )


def _tokens(contents: dict[str, dict[str, Any]], ids: Sequence[str]) -> int | None:
    counts = [contents[m].get("token_count") for m in ids]
    if not counts or not all(type(count) is int and count >= 0 for count in counts):
        return None
    return sum(counts)  # type: ignore[arg-type]
