"""The words of a Hermes import plan: a failed attempt's error text and the session's notes."""

from __future__ import annotations

from collections.abc import Mapping

from .blocks import Block
from .reader import HermesSession
from .rows import HermesRow
from .steps import SessionPlan, row_ranges


def describe_failure(
    block: Block,
    active: int,
    superseded_rows: list[int],
    first_row: Mapping[str, int],
    last_error: str | None,
) -> str:
    """What a failed commit did in Hermes and what it would have done, for its audit entry.
    `first_row`: the row each planned message was first written in."""
    summary = block.summary
    merged = " (merged into a tail message)" if summary.original is not None else ""
    tail = [
        (row, kept)
        for row, kept in zip(block.tail.rows, block.tail.ids, strict=True)
        if row is not summary.original
    ]
    head = _carried("head", list(zip(block.head, block.head_ids, strict=True)), first_row)
    error = (
        "Hermes could not commit this in-place compaction and re-inserted its uncommitted "
        "list on top of the live rows (the failed-commit bug, hermes-agent#99477): "
        f"{head}, summary row {summary.row_id}{merged}, {_carried('tail', tail, first_row)}. "
        f"Committed, it would have superseded {len(superseded_rows)} of the {active} "
        f"active messages (rows {row_ranges(superseded_rows) or 'none'}). "
        "Repaired on import: the copies and the summary were not imported."
    )
    if last_error:
        error += f" The session's last recorded compaction error: {last_error}"
    return error


def describe_lone_failure(summary: HermesRow, last_error: str | None) -> str:
    """A failed commit that left only its summary row (hermes-agent 0.18.0's shape)."""
    error = (
        "Hermes could not commit this in-place compaction, and its next flush wrote only the "
        f"summary (row {summary.row_id}), no copies (hermes-agent 0.18.0's failed-commit "
        "shape): what it would have kept cannot be told, so the audit lists the whole context "
        "it was based on. Repaired on import: the summary was not imported."
    )
    if last_error:
        error += f" The session's last recorded compaction error: {last_error}"
    return error


def describe_stranded_head(block: Block) -> list[str]:
    """The doubt when an undo hid a failed commit's summary but left its head copies live:
    Hermes' live rows then end with them, repeating messages the context holds once."""
    live = [row.row_id for row in block.head if not row.hidden]
    if not block.summary.hidden or not live:
        return []
    return [
        f"an undo hid the summary (row {block.summary.row_id}) of a failed commit but left its "
        f"head copies (rows {row_ranges(live)}) live: Hermes' live rows end with them, "
        "repeating messages the context holds once; kept once"
    ]


def summarise(result: SessionPlan, session: HermesSession) -> None:
    """The session's notes: what was repaired, kept, and could not be told."""
    notes = result.notes
    if result.failed_blocks:
        notes.append(
            f"{len(result.failed_blocks)} failed in-place compaction commits "
            "(hermes-agent#99477) recorded as failed attempts; their "
            f"{len(result.copies_dropped)} re-inserted copies and {len(result.failed_blocks)} "
            f"uncommitted summaries (rows {row_ranges(result.failed_blocks)}) were not imported"
        )
    if result.stray_copies:
        notes.append(
            f"{len(result.stray_copies)} copies of uncommitted summaries were not imported: "
            f"rows {row_ranges(result.stray_copies)}"
        )
    if result.carried:
        notes.append(
            f"{len(result.carried)} rows carried past a compaction are the same messages "
            f"as their originals: rows {row_ranges(result.carried)}"
        )
    if result.merged:
        notes.append(
            f"summaries merged into the next message (rows {row_ranges(result.merged)}): "
            "that message is kept once, the summary imported as a message of its own"
        )
    if result.lone_summaries:
        notes.append(
            f"summary rows {row_ranges(result.lone_summaries)} are failed commits that left "
            "only their summary (no copies): what they would have kept cannot be told"
        )
    for verdict, rows in sorted(result.stamped.items()):
        notes.append(
            f"the compactions with summary rows {row_ranges(rows)} had their rows archived by "
            f"a later compaction: told {verdict} by their rows' write times (a committed burst "
            "is stamped 1 µs apart in one transaction, a failed commit's flush row by row)"
        )
    _carried_lone_summaries(result, session)
    notes.extend(result.doubts)
    meta = session.metadata.get("session_meta", [])
    if meta:
        notes.append(f"{len(meta)} session_meta rows kept as session metadata")


def _carried_lone_summaries(result: SessionPlan, session: HermesSession) -> None:
    """A doubt when a later compaction carried a copy of a summary read as a failed commit
    that left only its summary: nothing tells that from a commit keeping neither head nor
    tail, and the copy is of a summary the context planned here does not hold."""
    lone = {row.identity: row.row_id for row in session.rows if row.row_id in result.lone_summaries}
    copies = [row for row in session.rows if row.row_id in result.stray_copies]
    carried = [row for row in copies if row.identity in lone]
    if carried:
        result.doubts.append(
            f"rows {row_ranges(row.row_id for row in carried)} are copies a later compaction "
            f"carried of summary rows {row_ranges(lone[row.identity] for row in carried)}, read "
            "as failed commits that left only their summary: they may have committed (keeping "
            "neither head nor tail), and the context after them differ from Hermes'"
        )


def _carried(part: str, copies: list[tuple[HermesRow, str]], first_row: Mapping[str, int]) -> str:
    if not copies:
        return f"no {part}"
    rows = row_ranges(row.row_id for row, _ in copies)
    return f"{part} rows {rows} (copies of {row_ranges(first_row[m] for _, m in copies)})"
