"""`import_hermes` on malformed Hermes files: a typed error naming what is wrong and nothing
stored, or, for what is only unusual (a rotation chain of any length, a parent cycle), an
import — never a recursion on the input's depth or length. The command line says it in one
line with exit 1 (tests/cli/test_cli_hermes.py)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.hermes import Release, make_hermes
from transcripts import TranscriptStore
from transcripts.adapters.importers.hermes import HermesImportError, import_hermes

DEEP = 100_000  # far past Python's recursion limit


def hermes_file(path: Path, sessions: list[tuple[object, object]], rows: list[tuple]) -> Path:
    """A Hermes store of `sessions` (id, parent) and message `rows` (session, role, content,
    tool_calls)."""
    make_hermes(path)
    with sqlite3.connect(path) as connection:
        for started, (session_id, parent) in enumerate(sessions):
            connection.execute(
                "INSERT INTO sessions (id, source, started_at, parent_session_id) "
                "VALUES (?, 'cli', ?, ?)",
                (session_id, started, parent),
            )
        for session_id, role, content, tool_calls in rows:
            connection.execute(
                "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
                "VALUES (?, ?, ?, ?, 1)",
                (session_id, role, content, tool_calls),
            )
    connection.close()
    return path


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    ("row", "says"),
    [
        (("s1", "user", "\x00json:" + deep(DEEP), None), "row 2: its content is JSON nested"),
        (("s1", "assistant", "", deep(DEEP)), "row 2: its tool_calls is JSON nested"),
        (("s1", "user", "\x00json:" + deep(150), None), "row 2: its content is JSON nested"),
    ],
    ids=["content past the recursion limit", "tool calls past it", "past the store's limit"],
)
def test_json_nested_deeper_than_a_message_may_be_is_an_error_and_nothing_is_stored(
    store: TranscriptStore, tmp_path: Path, row: tuple, says: str
) -> None:
    source = hermes_file(tmp_path / "state.db", [("s1", None)], [("s1", "user", "hi", None), row])
    with pytest.raises(HermesImportError, match=says) as raised:
        import_hermes(store, source)
    assert "nothing was imported" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert store.sessions() == []


@pytest.mark.parametrize("bad_id", [None, ""], ids=["NULL", "empty"])
def test_a_sessions_row_without_a_text_id_is_an_error_and_nothing_is_stored(
    store: TranscriptStore, tmp_path: Path, bad_id: object
) -> None:
    source = hermes_file(
        tmp_path / "state.db", [("good", None), (bad_id, None)], [("good", "user", "hi", None)]
    )
    with pytest.raises(HermesImportError, match=f"a sessions row has the id {bad_id!r}"):
        import_hermes(store, source)
    assert store.sessions() == []


def test_a_rotation_chain_of_1500_sessions_imports_parents_first(tmp_path: Path) -> None:
    chain = [(f"s{n:04}", f"s{n - 1:04}" if n else None) for n in range(1500)]
    rows = [(session_id, "user", f"turn of {session_id}", None) for session_id, _ in chain]
    source = hermes_file(tmp_path / "state.db", chain[::-1], rows)  # children start first
    with TranscriptStore.open("memory://") as store:  # the order is the file's, not the store's
        reports = import_hermes(store, source)
        assert [report.session_id for report in reports] == [s for s, _ in chain]
        assert {report.status for report in reports} == {"imported"}
        sessions = {session["id"]: session["parent_id"] for session in store.sessions()}
    assert sessions == dict(chain)


def test_a_parent_cycle_is_imported_with_the_cycle_broken_where_it_closes(
    store: TranscriptStore, tmp_path: Path
) -> None:
    source = hermes_file(
        tmp_path / "state.db", [("a", "b"), ("b", "a")], [("a", "user", "hi", None)]
    )
    reports = import_hermes(store, source)
    assert [report.session_id for report in reports] == ["b", "a"]
    assert {session["id"]: session["parent_id"] for session in store.sessions()} == {
        "a": "b",
        "b": "a",
    }


# Any value in any column of any row: the import either stores the file or refuses it with
# one line, storing nothing.
ANY_VALUE = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.binary(max_size=8),
    st.sampled_from(
        [
            "\x00json:" + deep(DEEP),
            "\x00json:{not json",
            "\x00json:" + '{"a": ' * 120 + "1" + "}" * 120,
            "[CONTEXT COMPACTION — REFERENCE ONLY] a summary",
            "[PRIOR CONTEXT — for reference only; not a new message]\nx\n\n"
            "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]\n\n[CONTEXT SUMMARY]: y",
            "user",
            "tool",
            '[{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]',
        ]
    ),
)
COLUMNS = ("role", "content", "tool_calls", "tool_call_id", "timestamp", "active", "compacted")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    damage=st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(COLUMNS), ANY_VALUE), max_size=6
    )
)
def test_a_release_s_file_damaged_anywhere_imports_or_is_refused_in_one_line_storing_nothing(
    tmp_path: Path, damage: list[tuple[int, str, object]]
) -> None:
    source = tmp_path / f"damaged-{uuid.uuid4().hex}.db"
    shutil.copy(Release.load("0.19.0").path, source)
    with sqlite3.connect(source) as connection:
        rows = [row for (row,) in connection.execute("SELECT id FROM messages ORDER BY id")]
        for pick, column, value in damage:
            with contextlib.suppress(sqlite3.IntegrityError):  # a value the schema refuses
                connection.execute(
                    f"UPDATE messages SET {column} = ? WHERE id = ?",
                    (value, rows[pick % len(rows)]),
                )
    connection.close()
    with TranscriptStore.open("memory://") as store:
        try:
            reports = import_hermes(store, source)
        except HermesImportError as error:
            assert "\n" not in str(error)
            assert store.sessions() == []
        else:
            assert {report.session_id for report in reports} == {s["id"] for s in store.sessions()}


def test_a_session_the_store_cannot_start_is_an_error_before_any_session_is_stored(
    store: TranscriptStore, tmp_path: Path
) -> None:
    source = hermes_file(
        tmp_path / "state.db", [("good", None), ("x" * 2000, None)], [("good", "user", "hi", None)]
    )
    with pytest.raises(HermesImportError, match="cannot be stored .*; nothing was imported"):
        import_hermes(store, source)
    assert store.sessions() == []
