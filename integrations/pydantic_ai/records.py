"""A conversation's record as its session's state, and back.

The record's fields but `conversation_id` (the session's id) are the state's keys, each as
pydantic-ai serializes it: `head_id`, `usage`, `deferred_tool_requests`, `scope`,
`forked_from`, `forked_at`, `title`, `metadata`, `branches`, `revision`, `updated_at`,
`format_version`. A session whose state has no `revision` holds no record: never saved, or
deleted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.conversation_store import ConversationDetails, ConversationRecord

_RECORDS: TypeAdapter[ConversationRecord] = TypeAdapter(ConversationRecord)
_DETAILS: TypeAdapter[ConversationDetails] = TypeAdapter(ConversationDetails)
KEYS = tuple(field.name for field in dataclasses.fields(ConversationRecord))[1:]
DETAILS = ("title", "metadata")  # what `update` changes, and a save keeps


def state_of(record: ConversationRecord, *, keep_details: bool) -> dict[str, Any]:
    """The state that stores `record`; `keep_details`: without the title and metadata, which
    a replaced record keeps."""
    state = _RECORDS.dump_python(record, mode="json")
    del state["conversation_id"]
    if keep_details:
        for key in DETAILS:
            del state[key]
    return state  # type: ignore[no-any-return]


def details_state(details: ConversationDetails) -> dict[str, Any]:
    return _DETAILS.dump_python(details, mode="json")  # type: ignore[no-any-return]


def record_of(conversation_id: str, state: Mapping[str, Any]) -> ConversationRecord | None:
    """The record a session's state holds, if it holds one."""
    if "revision" not in state:
        return None
    return _RECORDS.validate_python(
        {"conversation_id": conversation_id, **{key: state[key] for key in KEYS if key in state}}
    )
