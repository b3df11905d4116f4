"""`import jsonl` and `export`: files in, files out, and the round trip between them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent

import pytest

from support.cli import Run
from transcripts import TranscriptStore

RICH = [
    {"role": "system", "content": "Tu es un assistant. 你好 🌍"},
    {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"}]},
    {
        "role": "assistant",
        "content": None,
        "reasoning": "The user wants a tool.",
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {"name": "look", "arguments": '{"detail": "high"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_9", "content": "a cat", "name": "look"},
    {"role": "assistant", "content": "A cat.", "extra": {"score": 0.5, "n": 3, "ok": True}},
]


def write_jsonl(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def stored(url: str) -> dict[str, list[dict]]:
    """Every session's full history, to compare a store before and after a command."""
    with TranscriptStore.open(url) as store:
        return {s["id"]: store.history(s["id"]) for s in store.sessions()}


def test_import_jsonl_stores_one_session_per_file_named_after_its_stem(
    run: Run, db: str, tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "first-chat.jsonl", RICH)
    second = write_jsonl(tmp_path / "second.jsonl", RICH[:2])
    result = run("import", "jsonl", str(first), str(second))
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"{first}: session first-chat: 5 messages, 5 new (new session)\n"
        f"{second}: session second: 2 messages, 2 new (new session)\n"
        "Imported 7 new messages into 2 sessions.\n"
    )
    with TranscriptStore.open(db) as store:
        assert [s["id"] for s in store.sessions()] == ["first-chat", "second"]
        assert store.sessions()[0]["source"] == "jsonl"
        active = store.active("first-chat")
    assert [{k: v for k, v in m.items() if k != "id"} for m in active] == RICH


def test_lines_with_a_session_id_go_to_that_session(run: Run, db: str, tmp_path: Path) -> None:
    mixed = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            {"session_id": "a", "role": "user", "content": "to a"},
            {"session_id": "b", "role": "user", "content": "to b"},
            {"role": "user", "content": "to the file's session"},
            {"session_id": "a", "role": "assistant", "content": "a again"},
        ],
    )
    assert run("import", "jsonl", str(mixed)).exit_code == 0
    with TranscriptStore.open(db) as store:
        contents = {
            s["id"]: [m["content"] for m in store.active(s["id"])] for s in store.sessions()
        }
    assert contents == {
        "a": ["to a", "a again"],
        "b": ["to b"],
        "mixed": ["to the file's session"],
    }


def test_lines_keep_their_ids_and_lines_without_get_stable_ones(
    run: Run, db: str, tmp_path: Path
) -> None:
    chat = write_jsonl(
        tmp_path / "chat.jsonl",
        [
            {"id": "given", "role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "assistant", "content": "hello"},
        ],
    )
    run("import", "jsonl", str(chat))
    with TranscriptStore.open(db) as store:
        ids = [message["id"] for message in store.active("chat")]
    assert ids[0] == "given"
    assert ids[1].startswith("jsonl_") and ids[2].startswith("jsonl_")
    assert ids[1] != ids[2]  # the same content twice is two messages


def test_importing_the_same_file_again_stores_nothing_new(
    run: Run, db: str, tmp_path: Path
) -> None:
    chat = write_jsonl(tmp_path / "chat.jsonl", RICH)
    run("import", "jsonl", str(chat))
    before = stored(db)
    again = run("import", "jsonl", str(chat))
    assert again.exit_code == 0, again.output
    assert again.stdout == (
        f"{chat}: session chat: 5 messages, already stored\n"
        "Imported 0 new messages into 1 session.\n"
    )
    assert stored(db) == before


def test_importing_a_file_again_after_a_rewind_restores_nothing(
    run: Run, db: str, tmp_path: Path
) -> None:
    chat = write_jsonl(tmp_path / "chat.jsonl", RICH)
    run("import", "jsonl", str(chat))
    with TranscriptStore.open(db) as store:
        store.rewind("chat", count=2)
    before = stored(db)
    again = run("import", "jsonl", str(chat))
    assert "Imported 0 new messages into 1 session." in again.stdout
    assert stored(db) == before


def test_a_file_that_grew_adds_only_its_new_lines(run: Run, db: str, tmp_path: Path) -> None:
    chat = write_jsonl(tmp_path / "chat.jsonl", RICH[:3])
    run("import", "jsonl", str(chat))
    write_jsonl(chat, RICH)
    assert run("import", "jsonl", str(chat)).stdout.startswith(
        f"{chat}: session chat: 5 messages, 2 new\n"
    )
    assert len(stored(db)["chat"]) == 5


MALFORMED = {
    "invalid JSON": ('{"role": "user", "content": "unterminated', "not valid JSON: "),
    "not an object": ('["user", "hi"]', "a message must be a JSON object, not list"),
    "unknown role": (
        '{"role": "robot", "content": "beep"}',
        "message role must be one of assistant, developer, function, system, tool, user: "
        "got 'robot'",
    ),
    "empty id": ('{"id": "", "role": "user", "content": "x"}', "a message id must be"),
    "bad session_id": (
        '{"session_id": 7, "role": "user", "content": "x"}',
        "session_id must be a non-empty string: 7",
    ),
    "an id repeated with other content": (
        '{"id": "m1", "role": "user", "content": "other"}',
        "id 'm1' was given on line 1 with other content",
    ),
}


@pytest.mark.parametrize("kind", MALFORMED, ids=str)
def test_a_malformed_line_is_an_error_naming_file_and_line_and_nothing_is_imported(
    run: Run, db: str, tmp_path: Path, kind: str
) -> None:
    line, problem = MALFORMED[kind]
    good = write_jsonl(tmp_path / "good.jsonl", RICH[:2])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "m1", "role": "user", "content": "fine"}\n\n' + line + "\n")
    result = run("import", "jsonl", str(good), str(bad))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"Error: {bad} line 3: {problem}")
    assert len(result.stderr.splitlines()) == 1
    assert stored(db) == {}


def test_keep_going_imports_the_good_files_and_exits_1_naming_the_bad_ones(
    run: Run, db: str, tmp_path: Path
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", RICH[:2])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "fine"}\nnot json\n')
    missing = tmp_path / "missing.jsonl"
    result = run("import", "jsonl", str(bad), str(missing), str(good), "--keep-going")
    assert result.exit_code == 1
    assert result.stdout == (
        f"{good}: session good: 2 messages, 2 new (new session)\n"
        "Imported 2 new messages into 1 session.\n"
    )
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"Error: {bad} line 2: not valid JSON: ")  # then orjson's words
    assert errors[1:] == [
        f"Error: cannot read {missing}: No such file or directory",
        "Error: not everything was imported: 2 error(s) above.",
    ]
    assert list(stored(db)) == ["good"]


def test_keep_going_skips_a_session_the_store_refuses_and_imports_the_others(
    run: Run, db: str, tmp_path: Path
) -> None:
    with TranscriptStore.open(db) as store:
        store.start("clash")
        store.append("clash", [{"id": "m1", "role": "user", "content": "original"}])
    clash = write_jsonl(tmp_path / "clash.jsonl", [{"id": "m1", "role": "user", "content": "edit"}])
    good = write_jsonl(tmp_path / "good.jsonl", RICH[:1])
    result = run("import", "jsonl", str(clash), str(good), "--keep-going")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {clash}: session clash: message 'm1' of session")
    assert len(stored(db)["clash"]) == 1
    assert "good" in stored(db)
    alone = run("import", "jsonl", str(clash))
    assert alone.exit_code == 1
    assert alone.stderr.startswith(f"Error: {clash}: session clash: message 'm1' of session")


def test_an_empty_file_imports_an_empty_session(run: Run, db: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert run("import", "jsonl", str(empty)).exit_code == 0
    assert stored(db) == {"empty": []}
    assert run("export", "empty").stdout == ""


def test_export_jsonl_then_import_round_trips_the_active_context(
    run: Run, populated: str, tmp_path: Path
) -> None:
    exported = run("export", "trip")
    assert exported.exit_code == 0, exported.output
    file = tmp_path / "trip.jsonl"
    file.write_text(exported.stdout)
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    assert run("import", "jsonl", str(file), url=fresh).exit_code == 0
    with TranscriptStore.open(populated) as old, TranscriptStore.open(fresh) as new:
        assert new.active("trip") == old.active("trip")
    assert run("export", "trip", url=fresh).stdout == exported.stdout
    assert run("import", "jsonl", str(file)).stdout.startswith(  # into the original store
        f"{file}: session trip: 3 messages, already stored"
    )


def test_export_history_jsonl_round_trips_every_message_ever_stored(
    run: Run, populated: str, tmp_path: Path
) -> None:
    exported = run("export", "trip", "--history").stdout
    file = tmp_path / "trip.jsonl"
    file.write_text(exported)
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    run("import", "jsonl", str(file), url=fresh)
    with TranscriptStore.open(populated) as old, TranscriptStore.open(fresh) as new:
        assert new.active("trip") == [entry["message"] for entry in old.history("trip")]
    assert run("export", "trip", "--history", url=fresh).stdout == exported


def test_tool_calls_parts_reasoning_and_any_text_survive_the_round_trip(
    run: Run, db: str, tmp_path: Path
) -> None:
    original = write_jsonl(tmp_path / "rich.jsonl", RICH)
    run("import", "jsonl", str(original))
    exported = run("export", "rich").stdout
    assert [
        {k: v for k, v in json.loads(line).items() if k != "id"} for line in exported.splitlines()
    ] == RICH
    again = tmp_path / "again" / "rich.jsonl"
    again.parent.mkdir()
    again.write_text(exported)
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    run("import", "jsonl", str(again), url=fresh)
    assert run("export", "rich", url=fresh).stdout == exported


def test_export_markdown_shows_the_active_context_after_its_compaction_boundary(
    run: Run, populated: str, normalise: Callable[[str], str]
) -> None:
    result = run("export", "trip", "--format", "md")
    assert result.exit_code == 0, result.output
    assert normalise(result.stdout) == dedent("""\
        # Session trip

        - source: test
        - model: model-a
        - started: YYYY-MM-DD hh:mm:ss UTC
        - messages: 3 active, 7 stored
        - compactions: 1 committed, 1 failed

        ## Active context

        ### 1. system · `m1`

        You plan trips.

        ---

        > **Compaction `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`** at version 9, YYYY-MM-DD hh:mm:ss UTC: 4 superseded, 1 added, tokens 400→100 (over budget)

        ### 2. assistant · `msg_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx` · summary

        Summary: Lisbon plan; mild and showery.

        ### 3. user · `m6`

        Where to eat?
        """)  # noqa: E501


def test_export_markdown_history_shows_every_message_and_every_attempt_where_it_happened(
    run: Run, populated: str, normalise: Callable[[str], str]
) -> None:
    result = run("export", "trip", "--format", "md", "--history")
    assert normalise(result.stdout).split("## History\n\n")[1] == dedent("""\
        ### 1. system · `m1`

        You plan trips.

        ### 2. user · `m2` · superseded by `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`

        Three days in Lisbon?

        ### 3. assistant · `m3` · superseded by `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`

        Alfama, Belém, Sintra.

        ### 4. assistant · `m4` · superseded by `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`

        Tool call `forecast` (`call_1`):

        ```json
        {
          "city": "Lisbon"
        }
        ```

        ### 5. tool · `m5` · result of `call_1` · superseded by `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`

        17°C, showers.

        ### 6. user · `m6`

        Where to eat?

        ---

        > **Failed compaction `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`** at version 8, YYYY-MM-DD hh:mm:ss UTC: summarize_error: summarizer timed out (over budget)

        ---

        > **Compaction `cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`** at version 9, YYYY-MM-DD hh:mm:ss UTC: 4 superseded, 1 added, tokens 400→100 (over budget)

        ### 7. assistant · `msg_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx` · summary

        Summary: Lisbon plan; mild and showery.
        """)  # noqa: E501


def test_export_needs_a_known_format(run: Run, populated: str) -> None:
    result = run("export", "trip", "--format", "pdf")
    assert result.exit_code == 2
    assert "'pdf' is not one of 'jsonl', 'md', 'html'" in result.stderr
