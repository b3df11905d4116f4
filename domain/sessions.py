"""What starts a session: its id and its arguments, checked before anything is stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InvalidMessageError, TranscriptError
from .messages import check_name, plain_json


def check_start(
    session_id: object, source: object, model: object, parent_id: object, metadata: object
) -> dict[str, Any]:
    """Raise TranscriptError unless these can start a session on every backend; return the
    metadata as it is stored (see `plain_json`)."""
    if not isinstance(session_id, str) or not session_id:
        raise TranscriptError(f"a session id must be a non-empty string: {session_id!r}")
    if not isinstance(source, str):
        raise TranscriptError(f"source must be a string: {source!r}")
    for name, value in (("model", model), ("parent_id", parent_id)):
        if value is not None and not isinstance(value, str):
            raise TranscriptError(f"{name} must be a string or None: {value!r}")
    if not isinstance(metadata, Mapping):
        raise TranscriptError(f"metadata must be a JSON object: {metadata!r}")
    names = {"session id": session_id, "source": source, "model": model, "parent_id": parent_id}
    try:
        for what, text in names.items():
            if isinstance(text, str):
                check_name(text, what)
        checked, _ = plain_json({"session_id": session_id, "metadata": dict(metadata)}, "start")
    except InvalidMessageError as error:
        raise TranscriptError(str(error)) from None
    return checked["metadata"]
