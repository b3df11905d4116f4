"""Hostile and broken input through the library (the corpus is tests/data/): every case is a
typed error (a `TranscriptError`), and nothing already stored is lost or changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.corpus import (
    DATA,
    FTS5_QUERIES,
    JSONL_CASES,
    MESSAGES,
    NOT_STORES,
    QUERIES,
    REFUSED_SESSION_IDS,
    SESSION_IDS,
    copy,
)
from support.limits import READ_ONLY, limited, read_only
from support.reads import everything, seen
from support.rows import damage_event, log_rows, path_of, table_names
from transcripts import InvalidMessageError, StorageError, TranscriptError, TranscriptStore
from transcripts.adapters.importers.hermes import HermesImportError, import_hermes
from transcripts.adapters.importers.jsonl import JsonlError, read_jsonl
from transcripts.domain.errors import InvalidSearchError, SessionNotFoundError
from transcripts.domain.messages import MAX_MESSAGE_BYTES, canonical_json

KEPT = "kept"
VIEW_TABLES = {"stored_events", "sessions", "active_messages", "message_history"}


def fill(store: TranscriptStore) -> None:
    """A session with messages, a committed and a failed compaction: what must not change."""
    store.start(KEPT, source="test", model="m", metadata={"note": "keep me"})
    store.append(KEPT, [{"id": f"k{i}", "role": "user", "content": f"kept {i}"} for i in range(4)])
    store.compact(KEPT, lambda messages: [{"role": "system", "content": "summary"}, messages[-1]])
    store.fail_compaction(store.begin_compaction(KEPT), "summarizer down")


@pytest.fixture
def filled(store: TranscriptStore) -> TranscriptStore:
    fill(store)
    return store


@pytest.fixture
def filled_file(sqlite_url: str) -> Path:
    """A closed store file holding the `kept` session."""
    with TranscriptStore.open(sqlite_url) as store:
        fill(store)
    return path_of(sqlite_url)


# -- messages ---------------------------------------------------------------------------------


@pytest.mark.parametrize("message", MESSAGES.values(), ids=MESSAGES.keys())
def test_a_hostile_message_in_a_compaction_is_an_invalid_replacement_that_changes_nothing(
    filled: TranscriptStore, check_failed: Callable[..., dict[str, Any]], observe: Any, message: Any
) -> None:
    attempt = filled.begin_compaction(KEPT)
    before = observe(filled, KEPT)
    result = filled.commit_compaction(attempt, [{"role": "system", "content": "ok"}, message])
    entry = check_failed(filled, KEPT, result, before, "invalid_replacement")
    assert entry["error"].startswith("replacement item 1: ")


def at_size(size: int, message_id: str = "big") -> dict[str, Any]:
    """A tool result whose canonical JSON, id included, is exactly `size` bytes."""
    empty = {"id": message_id, "role": "tool", "tool_call_id": "c1", "content": ""}
    return {**empty, "content": "x" * (size - len(canonical_json(empty)))}


@pytest.mark.slow
def test_a_message_of_exactly_the_size_limit_is_stored_and_read_back(sqlite_url: str) -> None:
    message = at_size(MAX_MESSAGE_BYTES)
    assert len(canonical_json(message)) == MAX_MESSAGE_BYTES
    with TranscriptStore.open(sqlite_url) as store:
        store.start("big")
        assert store.append("big", [message]) == [message]
        assert store.active("big") == [message]


@pytest.mark.parametrize(
    "message",
    [
        at_size(MAX_MESSAGE_BYTES + 1),
        {**at_size(MAX_MESSAGE_BYTES + 1), "id": None},  # no id: the content alone is over
        {"role": "user", "content": "é" * (MAX_MESSAGE_BYTES // 2)},  # 2 bytes each in UTF-8
        {"role": "user", "content": "\x01" * (MAX_MESSAGE_BYTES // 6 + 1)},  # 6 bytes escaped
    ],
    ids=["one byte over", "over without its id", "over in two-byte characters", "over escaped"],
)
def test_a_message_over_the_size_limit_is_an_invalid_message_naming_the_limit(
    filled: TranscriptStore, message: dict[str, Any]
) -> None:
    if message.get("id", "") is None:
        message = {key: value for key, value in message.items() if key != "id"}
        message["content"] += "x" * len('"id":"big",')
    before = everything(filled)
    with pytest.raises(InvalidMessageError, match=r"over the limit of 33,554,432 bytes \(32 MiB\)"):
        filled.append(KEPT, [{"role": "user", "content": "fine"}, message])
    assert everything(filled) == before


def test_an_oversized_compaction_summary_is_an_invalid_replacement(filled: TranscriptStore) -> None:
    result = filled.compact(KEPT, lambda messages: [at_size(MAX_MESSAGE_BYTES + 1, "s")])
    assert not result.committed and result.failure == "invalid_replacement"
    assert "over the limit of 33,554,432 bytes" in (result.error or "")


# -- JSONL files ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", JSONL_CASES, ids=JSONL_CASES)
def test_a_malformed_jsonl_file_is_an_error_naming_the_file_and_the_line(
    tmp_path: Path, name: str
) -> None:
    path = copy(f"jsonl/{name}", tmp_path)
    case = JSONL_CASES[name]
    with pytest.raises(JsonlError) as raised:
        read_jsonl(path)
    assert isinstance(raised.value, TranscriptError)
    text = str(raised.value)
    assert text.startswith(f"{path} line {case['line']}: ")
    assert case["says"] in text
    assert "\n" not in text


def test_an_integer_beyond_64_bits_in_jsonl_is_refused_not_read_as_a_float(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "content": "x", "n": 18446744073709551615}\n')
    [session] = read_jsonl(path)
    assert session.messages[0]["n"] == 2**64 - 1  # the largest that fits, exact
    path.write_text('{"role": "user", "content": "x", "n": 18446744073709551616}\n')
    with pytest.raises(JsonlError, match="does not fit in 64 bits"):
        read_jsonl(path)


# -- session ids and search queries -----------------------------------------------------------


@pytest.mark.parametrize("session_id", SESSION_IDS.values(), ids=SESSION_IDS.keys())
def test_a_hostile_session_id_round_trips_through_every_call(
    filled: TranscriptStore, session_id: str
) -> None:
    filled.start(session_id, source=session_id, model=session_id, metadata={session_id: session_id})
    message = {"id": session_id, "role": "user", "content": f"needle {session_id}"}
    assert filled.append(session_id, [message]) == [message]
    assert filled.sync(session_id, [message, {"id": "m2", "role": "assistant", "content": "hi"}])
    assert filled.active(session_id)[0] == message
    assert [entry["id"] for entry in filled.history(session_id)] == [session_id, "m2"]
    assert filled.events(session_id)[0]["data"]["session_id"] == session_id
    assert filled.explain(session_id, session_id)["message"] == message
    assert filled.compact(session_id, lambda messages: messages[:1]).committed
    [hit] = filled.search("needle", session_id=session_id)
    assert (hit["session_id"], hit["message_id"]) == (session_id, session_id)
    [summary] = [s for s in filled.sessions() if s["id"] == session_id]
    assert (summary["source"], summary["model"], summary["metadata"]) == (
        session_id,
        session_id,
        {session_id: session_id},
    )
    assert filled.verify_projections().ok


@pytest.mark.parametrize("session_id", SESSION_IDS.values(), ids=SESSION_IDS.keys())
def test_a_hostile_session_id_never_started_is_session_not_found_and_changes_nothing(
    filled: TranscriptStore, session_id: str
) -> None:
    before = everything(filled)
    for call in (filled.active, filled.history, filled.events, filled.compactions):
        with pytest.raises(SessionNotFoundError, match="was never started"):
            call(session_id)
    with pytest.raises(SessionNotFoundError):
        filled.append(session_id, [{"role": "user", "content": "x"}])
    assert filled.search("kept", session_id=session_id) == []
    assert everything(filled) == before


@pytest.mark.parametrize("session_id", REFUSED_SESSION_IDS.values(), ids=REFUSED_SESSION_IDS.keys())
def test_a_session_id_no_backend_can_store_is_refused_and_never_found(
    filled: TranscriptStore, session_id: str
) -> None:
    before = everything(filled)
    with pytest.raises(TranscriptError, match="session id"):
        filled.start(session_id)
    for call in (filled.active, filled.history, filled.compactions):
        with pytest.raises(SessionNotFoundError):
            call(session_id)
    assert filled.search("kept", session_id=session_id) == []
    assert everything(filled) == before


def test_a_nul_character_in_a_message_id_source_or_model_is_refused(
    filled: TranscriptStore,
) -> None:
    before = everything(filled)
    with pytest.raises(InvalidMessageError, match="NUL"):
        filled.append(KEPT, [{"id": "a\x00b", "role": "user", "content": "x"}])
    for field in ("source", "model", "parent_id"):
        with pytest.raises(TranscriptError, match="NUL"):
            filled.start("new", **{field: "a\x00b"})
    assert everything(filled) == before


def test_a_nul_character_in_a_compaction_reason_is_kept_escaped(filled: TranscriptStore) -> None:
    result = filled.compact(KEPT, lambda messages: messages[-1:], reason="over\x00budget")
    assert result.committed
    assert filled.compactions(KEPT)[-1]["reason"] == "over\\x00budget"
    assert filled.verify_projections().ok


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_a_query_with_nothing_to_search_for_is_an_invalid_search_error_and_changes_nothing(
    filled: TranscriptStore, query: str
) -> None:
    before = everything(filled)
    with pytest.raises(InvalidSearchError):
        filled.search(query)
    assert everything(filled) == before
    assert len(filled.search("kept")) == 4


@pytest.mark.parametrize("query", FTS5_QUERIES.values(), ids=FTS5_QUERIES.keys())
def test_a_query_that_is_not_fts5_syntax_changes_nothing_and_is_an_error_where_fts5_searches(
    filled: TranscriptStore, backend: str, query: str
) -> None:
    before = everything(filled)
    if backend == "postgres":  # web-search syntax: every query parses; its words are searched
        assert isinstance(filled.search(query), list)
    else:
        with pytest.raises(InvalidSearchError):
            filled.search(query)
    assert everything(filled) == before
    assert len(filled.search("kept")) == 4


def test_hostile_ids_and_queries_leave_every_table_in_place(sqlite_url: str) -> None:
    with TranscriptStore.open(sqlite_url) as store:
        for session_id in SESSION_IDS.values():
            store.start(session_id)
            store.append(session_id, [{"role": "user", "content": session_id}])
        for query in [*QUERIES.values(), *FTS5_QUERIES.values()]:
            with pytest.raises(InvalidSearchError):
                store.search(query)
        assert store.verify_projections().ok
    assert VIEW_TABLES <= table_names(sqlite_url)
    assert len(log_rows(sqlite_url)) == 2 * len(SESSION_IDS)


# -- files that are not stores ----------------------------------------------------------------


@pytest.mark.parametrize("name", NOT_STORES)
def test_a_file_that_is_not_a_store_is_a_storage_error_and_left_untouched(
    tmp_path: Path, name: str
) -> None:
    path = copy(f"stores/{name}", tmp_path)
    with pytest.raises(StorageError, match="is not a transcript store"):
        TranscriptStore.open(f"sqlite:///{path}")
    assert path.read_bytes() == (DATA / "stores" / name).read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_a_hermes_store_of_an_unknown_schema_version_imports_nothing(
    filled: TranscriptStore, tmp_path: Path
) -> None:
    path = tmp_path / "state.db"
    shutil.copy(DATA / "stores" / "hermes_schema_v99.db", path)
    before = everything(filled)
    with pytest.raises(HermesImportError, match="schema version 99, which this importer"):
        import_hermes(filled, path)
    assert everything(filled) == before
    assert path.read_bytes() == (DATA / "stores" / "hermes_schema_v99.db").read_bytes()


# -- files the store cannot write -------------------------------------------------------------


def in_child(path: Path, **limits: Any) -> dict[str, Any]:
    """Open the store in a child process under `limits` and append 2 MB to it; what it raised."""
    done = limited("append", f"sqlite:///{path}", **limits)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize(("file_mode", "dir_mode"), READ_ONLY.values(), ids=READ_ONLY.keys())
def test_a_read_only_store_is_a_storage_error_and_nothing_stored_changes(
    filled_file: Path, reachable_dir: Path, file_mode: int, dir_mode: int
) -> None:
    path = reachable_dir / "store.db"
    shutil.copy(filled_file, path)
    rows = log_rows(f"sqlite:///{path}")
    with read_only(path, file_mode, dir_mode):
        outcome = in_child(path, drop_privileges=True)
    assert outcome["error"] and "StorageError" in outcome["error"], outcome
    assert str(path) in outcome["text"]
    assert log_rows(f"sqlite:///{path}") == rows
    with TranscriptStore.open(f"sqlite:///{path}") as store:
        assert [m["id"] for m in store.active(KEPT)][-1] == "k3"
        assert store.verify_projections().ok


@pytest.mark.slow
def test_a_full_disk_is_a_storage_error_and_everything_stored_before_is_intact(
    filled_file: Path,
) -> None:
    rows = log_rows(f"sqlite:///{filled_file}")
    with TranscriptStore.open(f"sqlite:///{filled_file}") as store:
        before = everything(store)
    sizes = [path.stat().st_size for path in filled_file.parent.iterdir()]
    # Writes past this size fail with EFBIG (Python ignores SIGXFSZ): a disk that fills up.
    outcome = in_child(filled_file, file_size=max(sizes) + 64 * 1024)
    assert outcome["error"] and "StorageError" in outcome["error"], outcome
    assert "cannot write session 'kept'" in outcome["text"]
    assert outcome["seconds"] < 10  # at once: waiting for the lock would not free the disk
    assert log_rows(f"sqlite:///{filled_file}") == rows
    with TranscriptStore.open(f"sqlite:///{filled_file}") as store:
        assert everything(store) == before
        assert store.verify_projections().ok
        store.append(KEPT, [{"id": "after", "role": "user", "content": "room again"}])
        assert store.active(KEPT)[-1]["id"] == "after"


# -- a corrupted stored event -----------------------------------------------------------------

SICK = "sick"


def set_state(state: bytes) -> Callable[[bytes], bytes]:
    return lambda _old: state


CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "not JSON": set_state(b"not json"),
    "truncated": lambda old: old[: len(old) // 2],
    "invalid UTF-8": set_state(b'{"message_id": "\xff\xfe"}'),
    "empty": set_state(b""),
    "an empty object": set_state(b"{}"),  # decodes, but is no event
    "a message that is a list": lambda old: old.replace(b'"message":{', b'"message":[{', 1).replace(
        b'},"content_hash"', b'}],"content_hash"', 1
    ),
}


def corrupt(path: Path, damage: Callable[[bytes], bytes]) -> None:
    """Damage version 3 (message s1) of the sick session in place, with plain SQL."""
    damage_event(f"sqlite:///{path}", SICK, 3, state=damage)


@pytest.fixture(
    params=[pytest.param(damage) for damage in CORRUPTIONS.values()],
    ids=list(CORRUPTIONS),
)
def damage(request: pytest.FixtureRequest) -> Callable[[bytes], bytes]:
    return request.param


@pytest.fixture
def sick_file(filled_file: Path) -> Path:
    with TranscriptStore.open(f"sqlite:///{filled_file}") as store:
        store.start(SICK)
        store.append(SICK, [{"id": f"s{i}", "role": "user", "content": f"s {i}"} for i in range(3)])
    return filled_file


def test_a_corrupted_event_leaves_the_other_sessions_readable_and_its_own_an_error_naming_it(
    sick_file: Path, damage: Callable[[bytes], bytes]
) -> None:
    with TranscriptStore.open(f"sqlite:///{sick_file}") as store:
        kept = seen(store, KEPT)
    corrupt(sick_file, damage)
    with TranscriptStore.open(f"sqlite:///{sick_file}") as store:
        store.rebuild_projections()  # the views had projected the event before it was damaged
        with pytest.raises(StorageError, match=r"a stored event is corrupt \(version 3: "):
            store.active(SICK)  # its views lack s1 (quarantined): they would mislead
        (sick,) = [s for s in store.sessions() if s["id"] == SICK]
        assert (sick["messages"], sick["quarantined"]) == (2, 1)  # s0 and s2 projected
        assert seen(store, KEPT) == kept
        report = store.verify_projections()
        assert [problem.kind for problem in report.problems] == ["quarantined"]


@pytest.mark.parametrize("call", ["events", "active_at", "compact"])
@pytest.mark.parametrize("damage", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_reading_or_compacting_a_session_with_a_corrupted_event_is_a_storage_error(
    sick_file: Path, damage: Callable[[bytes], bytes], call: str
) -> None:
    corrupt(sick_file, damage)
    rows = log_rows(f"sqlite:///{sick_file}")
    calls: dict[str, Callable[[TranscriptStore], object]] = {
        "events": lambda store: store.events(SICK),
        "active_at": lambda store: store.active_at(SICK, 3),
    }
    with TranscriptStore.open(f"sqlite:///{sick_file}") as store:
        if call == "compact":
            # The views projected the event before it was damaged; the commit replays the
            # log, meets it, and fails as storage trouble does: nothing is written.
            result = store.compact(SICK, lambda messages: messages[:1])
            assert (result.committed, result.failure) == (False, "storage_error")
            assert "a stored event is corrupt (version 3" in (result.error or "")
        elif call == "events" and damage is CORRUPTIONS["a message that is a list"]:
            # The raw log shows an event that decodes, damaged as it is; replaying it fails.
            assert isinstance(store.events(SICK)[2]["data"]["message"], list)
        else:
            with pytest.raises(StorageError, match="a stored event is corrupt"):
                calls[call](store)
    assert log_rows(f"sqlite:///{sick_file}") == rows


@pytest.mark.parametrize("damage", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_an_append_reads_no_old_event_but_refuses_a_session_whose_views_left_one_out(
    sick_file: Path, damage: Callable[[bytes], bytes]
) -> None:
    """An append resumes the session from its first event while the views hold all of it
    (README, Storage); once they quarantine the damaged event (a rebuild), it replays the
    session, meets the event and stores nothing."""
    corrupt(sick_file, damage)
    url = f"sqlite:///{sick_file}"
    rows = log_rows(url)
    more = {"role": "user", "content": "more"}
    with TranscriptStore.open(url) as store:
        (stored,) = store.append(SICK, [more])
        assert store.active(SICK)[-1] == stored
    assert log_rows(url)[: len(rows)] == rows and len(log_rows(url)) == len(rows) + 1
    rows = log_rows(url)
    with TranscriptStore.open(url) as store:
        store.rebuild_projections()
    with TranscriptStore.open(url) as store:
        with pytest.raises(StorageError, match="a stored event is corrupt"):
            store.append(SICK, [more])
    assert log_rows(url) == rows


# -- private files ----------------------------------------------------------------------------

MODES_CHILD = """
import json, os, stat, sys
from transcripts import TranscriptStore
os.umask(int(sys.argv[2], 8))
path = sys.argv[1]
with TranscriptStore.open(f"sqlite:///{path}") as store:
    store.start("s")
    store.append("s", [{"role": "user", "content": "x"}])
    folder = os.path.dirname(path)
    modes = {n: os.stat(os.path.join(folder, n)).st_mode for n in [".", *os.listdir(folder)]}
    print(json.dumps({name: oct(stat.S_IMODE(mode)) for name, mode in modes.items()}))
"""


@pytest.mark.parametrize("umask", ["000", "022", "077", "277"])
def test_a_new_store_its_wal_shm_and_lock_files_and_its_directory_are_private_whatever_the_umask(
    tmp_path: Path, umask: str
) -> None:
    path = tmp_path / "new" / "folder" / "store.db"
    done = subprocess.run(
        [sys.executable, "-c", MODES_CHILD, str(path), umask],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        ".": "0o700",
        "store.db": "0o600",
        "store.db-lock": "0o600",
        "store.db-shm": "0o600",
        "store.db-wal": "0o600",
    }
