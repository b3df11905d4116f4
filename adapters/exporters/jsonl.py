"""Exporting messages as OpenAI-style chat JSONL: one message per line, as stored, with its
`"id"`, so that `importers.jsonl` reads the file back into the same messages."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson


def jsonl_lines(messages: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One JSON object per line, as the JSONL importer reads it back."""
    for message in messages:
        yield orjson.dumps(message).decode()
