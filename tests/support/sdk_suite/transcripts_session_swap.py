"""A pytest plugin for the OpenAI Agents SDK's own session tests, run against ours.

tests/frameworks/test_agents_sdk_suite.py renames `SQLiteSession` to `TranscriptSession` in
the SDK's test files and loads this plugin (`-p transcripts_session_swap`), which gives the
`agents` package that name: `TranscriptSession(session_id, db_path=":memory:",
session_settings=None)`, SQLiteSession's signature, is our session on a store in memory
(one per session, as SQLite's `:memory:`) or in the SQLite file at `db_path`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agents

from transcripts.integrations.openai_agents import TranscriptSession as Session


def transcript_session(
    session_id: str,
    db_path: str | Path = ":memory:",
    sessions_table: str = "agent_sessions",
    messages_table: str = "agent_messages",
    session_settings: Any = None,
) -> Session:
    """A TranscriptSession where the test made a SQLiteSession (the table names mean
    nothing to a transcript store)."""
    memory = str(db_path) == ":memory:"
    url = "memory://" if memory else f"sqlite:///{Path(db_path).resolve()}"
    return Session(session_id, url=url, session_settings=session_settings)


agents.TranscriptSession = transcript_session  # type: ignore[attr-defined]
