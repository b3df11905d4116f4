"""A session's state: a JSON object kept beside its messages, changed key by key.

What a framework keeps about a conversation besides its messages — where its history ends,
its title, the usage so far, a token to fence writers on — lives in the log with the rest
(`StateChanged` events), so the log alone decides it and every view can show it. A change
sets some keys and removes others; one that changes nothing stores nothing. The state is
content: an encrypted store encrypts it, and `forget` erases it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import InvalidMessageError, TranscriptError
from .messages import MAX_MESSAGE_BYTES, canonical_json, plain_json


def check_state_change(values: object, remove: object) -> tuple[dict[str, Any], list[str]]:
    """`values` (a JSON object) and `remove` (keys) as a change; TranscriptError if invalid."""
    if not isinstance(values, Mapping):
        raise TranscriptError(f"state values must be a JSON object: {values!r}")
    if isinstance(remove, (str, bytes, Mapping)) or not isinstance(remove, Iterable):
        raise TranscriptError(f"the state keys to remove must be a list of strings: {remove!r}")
    removed = list(dict.fromkeys(remove))
    if not all(isinstance(key, str) for key in removed):
        raise TranscriptError(f"the state keys to remove must be strings: {removed!r}")
    both = set(values) & set(removed)
    if both:
        raise TranscriptError(f"state keys both set and removed: {sorted(both)}")
    try:
        plain, _ = plain_json(dict(values), "state")
    except InvalidMessageError as error:
        raise TranscriptError(str(error)) from None
    return plain, removed


def changed_state(
    state: Mapping[str, Any], values: Mapping[str, Any], removed: Iterable[str]
) -> dict[str, Any]:
    """`state` with `values` set and the `removed` keys gone (what a `StateChanged` does;
    TypeError if it is malformed)."""
    gone = set(removed)
    return {**{key: value for key, value in state.items() if key not in gone}, **values}


class SessionState:
    """The state of a transcript, kept by its `StateChanged` events (a Transcript mixin)."""

    state: dict[str, Any]
    StateChanged: type[Any]
    trigger_event: Callable[..., Any]
    _check_not_erased: Callable[[], None]
    _check_complete: Callable[[], None]

    def change_state(self, values: Mapping[str, Any], removed: Iterable[str]) -> None:
        """Set and remove keys of the state, as `check_state_change` gave them: one
        `StateChanged` of what is new, none if nothing is. TranscriptError if the state it
        leaves is larger than a message may be."""
        self._check_not_erased()
        self._check_complete()
        changed = {key: value for key, value in values.items() if self._differs(key, value)}
        gone = [key for key in removed if key in self.state]
        if changed and len(canonical_json({**self.state, **changed})) > MAX_MESSAGE_BYTES:
            raise TranscriptError(
                f"a session's state is at most {MAX_MESSAGE_BYTES:,} bytes of canonical JSON"
            )
        if changed or gone:
            self.trigger_event(self.StateChanged, values=changed, removed=gone)

    def apply_state_change(self, values: Mapping[str, Any], removed: Iterable[str]) -> None:
        self.state = changed_state(self.state, values, removed)

    def _differs(self, key: str, value: Any) -> bool:
        if key not in self.state:
            return True
        # As stored: JSON (1 and 1.0, True and 1 differ; key order does not matter)
        return canonical_json(self.state[key]) != canonical_json(value)
