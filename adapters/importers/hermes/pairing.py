"""Tool calls and their results in the planned context, checked as the store checks them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ....domain.compaction import CompactionRejected, check_tool_pairing, pairing_facts


class Pairing:
    """Which planned message makes each tool call, and which call each result answers."""

    def __init__(self) -> None:
        self.calls: dict[str, str] = {}
        self.answers: dict[str, str] = {}

    def remember(self, message_id: str, content: dict[str, Any]) -> None:
        calls, answers = pairing_facts(message_id, content)
        self.calls.update(calls)
        self.answers.update(answers)

    def forget(self, gone: Iterable[str]) -> None:
        removed = set(gone)
        self.calls = {call: m for call, m in self.calls.items() if m not in removed}
        self.answers = {m: call for m, call in self.answers.items() if m not in removed}

    def allows(
        self, order: list[str], superseded: list[str], new_id: str, new: dict[str, Any]
    ) -> bool:
        """Whether the store commits `order` (with the new message `new_id`)."""
        new_calls, new_answers = pairing_facts(new_id, new)
        try:
            check_tool_pairing(
                order, {**self.calls, **new_calls}, {**self.answers, **new_answers}, superseded
            )
        except CompactionRejected:
            return False
        return True
