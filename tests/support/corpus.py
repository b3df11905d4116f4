"""The corpus of hostile and broken input in tests/data/ (its README says what each file
is), read once: messages that are not valid, session ids and search queries, malformed JSONL
files and files that are not stores; and `copy`, which hands a test a copy of a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
MESSAGES: dict[str, Any] = json.loads((DATA / "hostile_messages.json").read_text("utf-8"))
NAMES: dict[str, dict[str, Any]] = json.loads((DATA / "hostile_names.json").read_text("utf-8"))
# file name in jsonl/: {"line": the line it is refused at, "says": what the error says}
JSONL_CASES: dict[str, dict[str, Any]] = json.loads((DATA / "jsonl" / "cases.json").read_text())
NOT_STORES = ["notes.txt.db", "sqlite_header_only.db", "hermes_schema_v99.db"]  # in stores/


def expanded(value: str | dict[str, Any]) -> str:
    """A name of the corpus: text, or `{"repeat", "times", "then"}` for a long one."""
    if isinstance(value, str):
        return value
    return value["repeat"] * value["times"] + value.get("then", "")


SESSION_IDS = {name: expanded(value) for name, value in NAMES["session_ids"].items()}
REFUSED_SESSION_IDS = {name: expanded(v) for name, v in NAMES["refused_session_ids"].items()}
QUERIES: dict[str, str] = NAMES["invalid_queries"]  # refused on every backend
FTS5_QUERIES: dict[str, str] = NAMES["invalid_fts5_queries"]  # refused where FTS5 searches


def copy(name: str, folder: Path) -> Path:
    """A copy of a corpus file (`jsonl/…`, `stores/…`) in `folder`: the corpus itself is
    never changed."""
    target = folder / Path(name).name
    shutil.copy(DATA / name, target)
    return target
