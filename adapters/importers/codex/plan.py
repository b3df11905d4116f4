"""Planning a rollout's import: its lines, in order, as store steps (the package docstring says
what becomes what). Pure: reads a `Rollout`, writes nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ....domain.compaction import CompactionRejected, check_tool_pairing, pairing_facts
from ....domain.errors import InvalidMessageError
from ....domain.messages import check_json, split_id, with_id
from .fields import counted, error_code, id_of, numbers, usable_id
from .forks import Base, fork_point
from .items import KNOWN_TYPES, Item, to_message
from .metadata import SAFE_METADATA, session_metadata
from .rollout import Line, Rollout
from .steps import WINDOW_EXCEEDED, Append, Compact, Fail, SessionPlan, derived_id


class NotARollout(Exception):
    """The file does not start with a Codex `session_meta` line."""


@dataclass
class _Turn:
    """A turn begun (`task_started`): its line and the context before it."""

    line: int
    turn_id: str
    snapshot: list[str]
    has_context: bool = False  # Codex wrote its turn_context: its requests began


def plan_rollout(rollout: Rollout, bases: Sequence[Base] = ()) -> SessionPlan:
    """The session a rollout holds, as steps, starting from the lines of the sessions it
    forked from (`bases`, see `forks`); raise NotARollout for any other file."""
    planner = _Planner(rollout)
    for base in bases:
        planner.origin = base.session_id
        planner.plan.notes += [
            f"in the rollout of session {base.session_id}: {note}" for note in base.notes
        ]
        for line in base.lines:
            planner.read(line)
    planner.origin = None
    for line in rollout.lines[1:]:
        planner.read(line)
    return planner.finish()


class _Planner:
    def __init__(self, rollout: Rollout) -> None:
        first = rollout.lines[0] if rollout.lines else None
        payload = first.payload if first is not None else None
        if first is None:
            raise NotARollout("not a Codex rollout: none of its lines is a rollout record")
        if first.type != "session_meta" or not isinstance(payload, dict):
            raise NotARollout(f"not a Codex rollout: line {first.number} is no session_meta record")
        session_id = payload.get("id")
        if not usable_id(session_id):
            raise NotARollout(f"line {first.number}: session_meta has no usable id")
        model = payload.get("model")
        metadata = session_metadata(payload, rollout.path)
        doubts = list(rollout.doubts)
        try:
            check_json(metadata, "metadata")
        except InvalidMessageError as error:
            doubts.append(f"line {first.number}: session_meta the store cannot hold ({error})")
            metadata = {
                key: value
                for key, value in metadata.items()
                if key in SAFE_METADATA and isinstance(value, str)
            }
        point = fork_point(payload)
        self.plan = SessionPlan(
            path=rollout.path,
            parent_id=point[0] if point and usable_id(point[0]) else None,
            whole_lines=rollout.whole_lines,
            session_id=session_id,
            model=model if isinstance(model, str) else None,
            metadata=metadata,
            notes=list(rollout.notes),
            doubts=doubts,
        )
        self.items: dict[str, Item] = {}  # every id stored -> the item it holds
        self.tool_facts: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
        self.tokens: int | None = None  # the last token count Codex measured
        self.tokens_at_summary: int | None = None  # …when it asked for a summary
        self.pending: Compact | None = None  # a compaction waiting for its tokens after
        self.turn: _Turn | None = None
        self.repeated: list[int] = []  # lines of items whose id was stored already
        self.unknown_items: Counter[str] = Counter()
        self.unknown_lines: Counter[str] = Counter()
        self.origin: str | None = None  # the session whose rollout the lines read come from

    @property
    def session_id(self) -> str:
        return self.plan.session_id

    def read(self, line: Line) -> None:
        handler = {
            "session_meta": self._session_meta,
            "turn_context": self._turn_context,
            "event_msg": self._event,
            "response_item": self._response_item,
            "compacted": self._compacted,
        }.get(line.type)
        if handler is not None:
            handler(line)
        elif line.type not in ("world_state", "token_usage_record"):
            self.unknown_lines[line.type] += 1

    def finish(self) -> SessionPlan:
        notes = self.plan.notes
        if self.repeated:
            notes.append(
                f"{len(self.repeated)} items repeat the id of an item stored before (lines "
                f"{numbers(self.repeated)}): each stored again under an id of its own, as "
                "Codex's context holds it again"
            )
        if self.unknown_items:
            notes.append(
                f"items of types without a role of their own, stored as assistant "
                f"messages: {counted(self.unknown_items)}"
            )
        if self.unknown_lines:
            notes.append(f"line types not read: {counted(self.unknown_lines)}")
        return self.plan

    # -- lines ---------------------------------------------------------------------------------

    def _session_meta(self, line: Line) -> None:
        payload = line.payload if isinstance(line.payload, dict) else {}
        if payload.get("id") != self.session_id:
            self.plan.doubts.append(
                f"{self._at(line.number)}: a session_meta of another session "
                f"({payload.get('id')!r}): ignored"
            )

    def _turn_context(self, line: Line) -> None:
        payload = line.payload if isinstance(line.payload, dict) else {}
        if self.plan.model is None and isinstance(payload.get("model"), str):
            self.plan.model = payload["model"]
        if self.turn is not None:
            self.turn.has_context = True

    def _event(self, line: Line) -> None:
        payload = line.payload if isinstance(line.payload, dict) else {}
        kind = payload.get("type")
        if kind == "task_started":
            turn_id = payload.get("turn_id")
            self.turn = _Turn(line.number, str(turn_id or "?"), list(self.plan.active))
        elif kind == "token_count":
            self._token_count(payload.get("info"))
        elif kind == "task_complete":
            if error_code(payload.get("error")) == WINDOW_EXCEEDED:
                self._window_exceeded(line, payload["error"])
            self.turn, self.tokens_at_summary = None, None

    def _token_count(self, info: object) -> None:
        if not isinstance(info, dict):
            return
        last = (info.get("last_token_usage") or {}).get("total_tokens")
        total = (info.get("total_token_usage") or {}).get("total_tokens")
        if type(last) is not int or last < 0 or total == info.get("model_context_window"):
            return  # no count, or Codex marking the window full after an overflow
        if self.pending is not None:
            self.pending.tokens_after = last
            self.pending = None
        self.tokens = last

    def _window_exceeded(self, line: Line, error: dict[str, Any]) -> None:
        """A turn ended in `context_window_exceeded`. Before its turn_context, the request
        that failed was the compaction Codex runs before a turn's first request. The failure
        is recorded here, where the rollout tells it, so that the steps follow the lines (an
        import of a rollout that went on since resumes after the steps it stored)."""
        turn = self.turn
        text = error.get("message") if isinstance(error.get("message"), str) else ""
        if turn is None or turn.has_context:
            turn_id = turn.turn_id if turn else "?"
            self.plan.notes.append(
                f"{self._at(line.number)}: turn {turn_id} ended in context_window_exceeded once "
                "its model requests began: a request overflowed or a compaction during the "
                "turn failed, and the rollout does not say which; no attempt is recorded"
            )
            return
        error_text = (
            f"{text} ({WINDOW_EXCEEDED}: the compaction Codex runs before a turn found no "
            "room; Codex retries it, dropping its oldest item each time, and the rollout "
            "records neither the attempts nor their number)"
        )
        reason = (
            f"Codex compaction before turn {turn.turn_id} "
            f"({self._rollout_at(f'lines {turn.line}–{line.number}')})"
        )
        snapshot = list(self.plan.active)
        step_line = self._step_line(line.number)
        self.plan.steps.append(Fail(step_line, reason, snapshot, turn.snapshot, error_text))

    def _response_item(self, line: Line) -> None:
        item = line.payload
        if not isinstance(item, dict):
            self.plan.doubts.append(
                f"{self._at(line.number)}: a response_item that is no object: not imported"
            )
            return
        if (line.record.get("metadata") or {}).get("compaction_output") is True:
            self.tokens_at_summary = self.tokens  # the summary Codex asked for
        if item.get("type") not in KNOWN_TYPES:
            self.unknown_items[str(item.get("type"))] += 1
        item_id = id_of(item)
        if usable_id(item_id) and item_id not in self.items:
            message_id = item_id
        else:
            message_id = self._derived_id(line)
            if item_id in self.items:
                self.repeated.append(line.number)
        message = self._message(message_id, item, self._provenance(line), line.number)
        if message is not None:
            self.plan.steps.append(Append(self._step_line(line.number), message))
            self.plan.active.append(message_id)

    def _compacted(self, line: Line) -> None:
        payload = line.payload if isinstance(line.payload, dict) else {}
        history = payload.get("replacement_history")
        metadata = payload.get("replacement_history_metadata")
        metadata = metadata if isinstance(metadata, list) else []
        if not isinstance(history, list):
            self.plan.doubts.append(
                f"{self._at(line.number)}: a compaction without replacement_history (an older "
                "Codex): its summary replaces the whole context; the recent user messages "
                "Codex kept with it are not named by the line"
            )
            text = payload.get("message") if isinstance(payload.get("message"), str) else ""
            history = [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                }
            ]
        snapshot = list(self.plan.active)
        replacement = self._replacement(line, history, metadata)
        remote = any(
            isinstance(item, dict) and item.get("type") == "compaction" for item in history
        )
        before = self.tokens if self.tokens_at_summary is None else self.tokens_at_summary
        step = Compact(
            self._step_line(line.number),
            f"Codex {'remote' if remote else 'local'} compaction "
            f"({self._rollout_at(f'line {line.number}')})",
            snapshot,
            replacement,
            commits=self._pairs(replacement),
            tokens_before=before,
        )
        self.plan.steps.append(step)
        self.pending, self.tokens_at_summary = step, None
        if step.commits:
            self.plan.active = [m if isinstance(m, str) else m["id"] for m in replacement]
        else:
            for new in step.added:  # the store stores none of them
                del self.items[new["id"]]
                self.tool_facts.pop(new["id"], None)
            self.plan.doubts.append(
                f"{self._at(line.number)}: Codex kept a tool output without the call it answers, "
                "a context the store refuses: recorded as a failed attempt "
                "(orphaned_tool_result); the context stays as it was"
            )

    # -- helpers -------------------------------------------------------------------------------

    def _replacement(
        self, line: Line, history: list[Any], metadata: list[Any]
    ) -> list[str | dict[str, Any]]:
        """Each item of a replacement_history: the id of the active message holding it (kept),
        else a new message (under its own id when the session never stored that id)."""
        active = set(self.plan.active)
        replacement: list[str | dict[str, Any]] = []
        named: set[str] = set()  # the ids it names
        for index, item in enumerate(history):
            if not isinstance(item, dict):
                self.plan.doubts.append(
                    f"{self._at(line.number)}: replacement item {index} is no object: not imported"
                )
                continue
            item_id = id_of(item)
            if item_id in active and item_id not in named and self.items[item_id] == item:
                replacement.append(item_id)
                named.add(item_id)
                continue
            message_id = item_id
            if not usable_id(item_id) or item_id in self.items:
                message_id = self._derived_id(line, index)
                if item_id in self.items:
                    self.plan.notes.append(
                        f"{self._at(line.number)}: replacement item {index} has the id of a stored "
                        f"message ({item_id}) but {self._unlike(item_id, item, named)}: "
                        f"stored as a new message, {message_id}"
                    )
            provenance = self._origin({"line": line.number, "replacement_index": index})
            if index < len(metadata) and metadata[index] is not None:
                provenance["metadata"] = metadata[index]
            message = self._message(message_id, item, provenance, line.number)
            if message is not None:
                replacement.append(message)
                if item_id is not None:
                    named.add(item_id)
        return replacement

    def _at(self, number: int) -> str:
        """Where a line is, in the words of a note."""
        return f"line {number}" if self.origin is None else self._rollout_at(f"line {number}")

    def _rollout_at(self, lines: str) -> str:
        """Where lines are, in the words of a reason: `rollout line N` in this rollout."""
        if self.origin is None:
            return f"rollout {lines}"
        return f"rollout of session {self.origin}, {lines}"

    def _step_line(self, number: int) -> int:
        """The line of this rollout a step comes from: line 1 names the fork's base."""
        return number if self.origin is None else 1

    def _provenance(self, line: Line) -> dict[str, Any]:
        record = line.record
        found = {
            "line": line.number,
            "timestamp": record.get("timestamp"),
            "ordinal": record.get("ordinal"),
            "metadata": record.get("metadata"),
        }
        return self._origin({key: value for key, value in found.items() if value is not None})

    def _origin(self, provenance: dict[str, Any]) -> dict[str, Any]:
        """Provenance of a line another session's rollout holds names that session."""
        return provenance if self.origin is None else {**provenance, "session": self.origin}

    def _derived_id(self, line: Line, index: int | None = None) -> str:
        """An id for an item from its line: by Codex's ordinal, else (no ordinal, or one a
        changed file repeats) by the line's number."""
        session_id = self.origin or self.session_id
        message_id = derived_id(session_id, line.key, index)
        if message_id in self.items:
            message_id = derived_id(session_id, f"line{line.number}", index)
        return message_id

    def _unlike(self, item_id: str, item: Item, named: set[str]) -> str:
        if item_id in named:
            return "names it a second time"
        if self.items[item_id] != item:
            return "other content"
        return "that message left the context before"

    def _message(
        self, message_id: str, item: Item, provenance: dict[str, Any], number: int
    ) -> dict[str, Any] | None:
        message = with_id(message_id, to_message(item, provenance))
        try:
            split_id(message)
        except InvalidMessageError as error:
            self.plan.doubts.append(
                f"{self._at(number)}: an item the store cannot hold ({error}): not imported"
            )
            return None
        self.items[message_id] = item
        facts = pairing_facts(message_id, message)
        if any(facts):
            self.tool_facts[message_id] = facts
        return message

    def _pairs(self, replacement: list[str | dict[str, Any]]) -> bool:
        """Whether the store will take this replacement: no tool output without its call."""
        calls: dict[str, str] = {}
        answers: dict[str, str] = {}
        order = [m if isinstance(m, str) else m["id"] for m in replacement]
        for message_id in [*self.plan.active, *order]:
            made, answered = self.tool_facts.get(message_id, ({}, {}))
            calls.update(made)
            answers.update(answered)
        try:
            check_tool_pairing(order, calls, answers, [])
        except CompactionRejected:
            return False
        return True
