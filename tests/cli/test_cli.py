"""The read commands, run with click's CliRunner on a store file with known content.

Outputs are compared exactly, after `normalise` replaced made-up ids and times with
placeholders of the same length (and trailing spaces are dropped).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import Result

from support.cli import Run, table
from transcripts import SetState, TranscriptStore


def test_info_shows_the_backend_the_counts_and_the_state_of_the_views(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    path = populated.removeprefix("sqlite:///")
    assert output(run("info")) == table(f"""\
        Store:        {populated}
        Backend:      sqlite, file {path}
        Durability:   full (journal_mode=wal, synchronous=FULL)
        Sessions:     2
        Messages:     9 stored, 5 active
        Compactions:  1 committed, 1 failed
        Events:       12
                                         Projections
        ┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━┳━━━━━━┳━━━━━┳━━━━━━┳━━━━━━━━━━━━━┓
        ┃ view                ┃ version ┃ position ┃ head ┃ lag ┃ rows ┃ quarantined ┃
        ┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━╇━━━━━━╇━━━━━╇━━━━━━╇━━━━━━━━━━━━━┩
        │ active_messages     │ 4       │ 12       │ 12   │ 0   │ 5    │ 0           │
        │ message_history     │ 8       │ 12       │ 12   │ 0   │ 9    │ 0           │
        │ compaction_attempts │ 5       │ 12       │ 12   │ 0   │ 2    │ 0           │
        │ sessions            │ 8       │ 12       │ 12   │ 0   │ 2    │ 0           │
        │ message_search      │ 8       │ 0        │ 12   │ 12  │ 0    │ 0           │
        └─────────────────────┴─────────┴──────────┴──────┴─────┴──────┴─────────────┘
        """)


def test_info_json_gives_the_counts_and_every_view(run: Run, populated: str) -> None:
    info = json.loads(run("info", "--json").stdout)
    assert {key: value for key, value in info.items() if key != "projections"} == {
        "url": populated,
        "backend": "sqlite",
        "path": populated.removeprefix("sqlite:///"),
        "encrypted": False,
        "sessions": 2,
        "messages": 9,
        "active": 5,
        "rewound": 0,
        "compactions_committed": 1,
        "compactions_failed": 1,
        "events": 12,
        "erased": 0,
        "durability": {"durability": "full", "journal_mode": "wal", "synchronous": "FULL"},
    }
    assert [view["view"] for view in info["projections"]] == [
        "active_messages",
        "message_history",
        "compaction_attempts",
        "sessions",
        "message_search",  # lags until a search
    ]
    assert all(view["lag"] == 0 for view in info["projections"][:4])


def test_info_on_a_memory_store_says_so(run: Run) -> None:
    info = json.loads(run("info", "--json", url="memory://").stdout)
    assert (info["backend"], info["path"], info["sessions"]) == ("memory", None, 0)


def test_sessions_lists_every_session_with_its_counts_and_lineage(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("sessions")) == table("""\
                                                           Sessions
        ┏━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━┓
        ┃ session ┃ source ┃ model   ┃ parent ┃ started          ┃ last activity    ┃ active ┃ stored ┃ compactions  ┃
        ┡━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━┩
        │ trip    │ test   │ model-a │        │ YYYY-MM-DD hh:mm │ YYYY-MM-DD hh:mm │      3 │      7 │ 1 (1 failed) │
        │ chat    │ other  │ model-b │ trip   │ YYYY-MM-DD hh:mm │ YYYY-MM-DD hh:mm │      2 │      2 │ 0            │
        └─────────┴────────┴─────────┴────────┴──────────────────┴──────────────────┴────────┴────────┴──────────────┘
        """)


def session_ids(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [session["id"] for session in json.loads(result.stdout)]


def test_sessions_filter_by_source_and_model(run: Run, populated: str) -> None:
    assert session_ids(run("sessions", "--json", "--source", "other")) == ["chat"]
    assert session_ids(run("sessions", "--json", "--model", "model-a")) == ["trip"]
    assert session_ids(run("sessions", "--json", "--source", "other", "--model", "model-a")) == []


def test_sessions_limit_keeps_the_most_recently_started(run: Run, populated: str) -> None:
    assert session_ids(run("sessions", "--json", "-n", "1")) == ["chat"]
    assert session_ids(run("sessions", "--json", "--limit", "5")) == ["trip", "chat"]


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        ("2000-01-01", ["trip", "chat"]),
        ("2000-01-01T00:00:00+02:00", ["trip", "chat"]),
        ("9999-12-31", []),
        ("9999-12-31T23:59:59Z", []),
    ],
)
def test_sessions_since_takes_a_date_or_an_iso_datetime(
    run: Run, populated: str, since: str, expected: list[str]
) -> None:
    assert session_ids(run("sessions", "--json", "--since", since)) == expected


def test_sessions_since_a_bad_date_is_a_usage_error(run: Run, populated: str) -> None:
    result = run("sessions", "--since", "last tuesday")
    assert result.exit_code == 2
    assert "'last tuesday' is not a date (2026-03-01)" in result.stderr


def test_sessions_on_an_empty_store_says_there_are_none(run: Run, db: str) -> None:
    TranscriptStore.open(db).close()
    assert run("sessions").stdout == "No sessions.\n"
    assert run("sessions", "--json").stdout == "[]\n"


def test_show_prints_the_active_context_in_order(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("show", "trip")) == table("""\
                                              Active context of trip
        ┏━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ # ┃ id                                   ┃ role      ┃ content                                 ┃
        ┡━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ 1 │ m1                                   │ system    │ You plan trips.                         │
        │ 2 │ msg_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx │ assistant │ Summary: Lisbon plan; mild and showery. │
        │ 3 │ m6                                   │ user      │ Where to eat?                           │
        └───┴──────────────────────────────────────┴───────────┴─────────────────────────────────────────┘
                                                    3 messages
        """)  # noqa: E501


def test_show_as_of_a_version_prints_the_context_right_after_that_event(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("show", "trip", "--as-of", "3")) == table("""\
            Active context of trip at version 3
        ┏━━━┳━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ # ┃ id ┃ role   ┃ content               ┃
        ┡━━━╇━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━┩
        │ 1 │ m1 │ system │ You plan trips.       │
        │ 2 │ m2 │ user   │ Three days in Lisbon? │
        └───┴────┴────────┴───────────────────────┘
                        2 messages
        """)
    before_compaction = json.loads(run("show", "trip", "--as-of", "8", "--json").stdout)
    assert [message["id"] for message in before_compaction] == ["m1", "m2", "m3", "m4", "m5", "m6"]


def test_show_json_gives_the_messages_exactly_as_stored(run: Run, populated: str) -> None:
    with TranscriptStore.open(populated) as store:
        assert json.loads(run("show", "trip", "--json").stdout) == store.active("trip")


def test_history_marks_superseded_messages_and_shows_each_compaction_where_it_happened(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("history", "trip")) == table("""\
                                          History of trip (7 messages, 2 compaction attempts)
        ┏━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ v ┃ id                                   ┃ role      ┃ state            ┃ content                                    ┃
        ┡━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ 2 │ m1                                   │ system    │ active           │ You plan trips.                            │
        │ 3 │ m2                                   │ user      │ superseded by v9 │ Three days in Lisbon?                      │
        │ 4 │ m3                                   │ assistant │ superseded by v9 │ Alfama, Belém, Sintra.                     │
        │ 5 │ m4                                   │ assistant │ superseded by v9 │ calls forecast({"city": "Lisbon"})         │
        │ 6 │ m5                                   │ tool      │ superseded by v9 │ 17°C, showers.                             │
        │ 7 │ m6                                   │ user      │ active           │ Where to eat?                              │
        ├───┼──────────────────────────────────────┼───────────┼──────────────────┼────────────────────────────────────────────┤
        │ 8 │ cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx │           │ failed           │ compaction failed: summarize_error:        │
        │   │                                      │           │                  │ summarizer timed out (over budget)         │
        ├───┼──────────────────────────────────────┼───────────┼──────────────────┼────────────────────────────────────────────┤
        │ 9 │ cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx │           │ committed        │ compaction: 4 superseded, 1 added, tokens  │
        │   │                                      │           │                  │ 400→100 (over budget)                      │
        ├───┼──────────────────────────────────────┼───────────┼──────────────────┼────────────────────────────────────────────┤
        │ 9 │ msg_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx │ assistant │ active summary   │ Summary: Lisbon plan; mild and showery.    │
        └───┴──────────────────────────────────────┴───────────┴──────────────────┴────────────────────────────────────────────┘
        """)  # noqa: E501


def test_history_json_gives_every_message_with_its_marks_and_version(
    run: Run, populated: str
) -> None:
    with TranscriptStore.open(populated) as store:
        stored = store.history("trip")
        committed = store.compactions("trip")[1]["id"]
    entries = json.loads(run("history", "trip", "--json").stdout)
    assert [{k: v for k, v in entry.items() if k != "version"} for entry in entries] == stored
    assert [entry["version"] for entry in entries] == [2, 3, 4, 5, 6, 7, 9]
    assert [entry["superseded_by"] for entry in entries] == [None, *[committed] * 4, None, None]


def test_audit_lists_committed_and_failed_attempts_with_reasons_and_token_savings(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("audit", "trip")) == table("""\
                                                     Compaction audit
        ┏━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ compaction / at (UTC) ┃ status    ┃ change         ┃ tokens    ┃ reason / failure: error               ┃
        ┡━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ cmp_xxxxxxxx…         │ failed    │ no replacement │           │ over budget                           │
        │ YYYY-MM-DD hh:mm:ss   │           │                │           │ summarize_error: summarizer timed out │
        │ cmp_xxxxxxxx…         │ committed │ -4 +1          │ 400→100   │ over budget                           │
        │ YYYY-MM-DD hh:mm:ss   │           │                │ saved 300 │                                       │
        └───────────────────────┴───────────┴────────────────┴───────────┴───────────────────────────────────────┘
        2 attempts: 1 committed, 1 failed; 300 tokens saved.
        """)


def test_audit_without_a_session_covers_every_session_and_failed_keeps_the_failures(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("audit", "--failed")) == table("""\
                                                       Compaction audit
        ┏━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ session ┃ compaction / at (UTC) ┃ status ┃ change         ┃ tokens ┃ reason / failure: error               ┃
        ┡━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ trip    │ cmp_xxxxxxxx…         │ failed │ no replacement │        │ over budget                           │
        │         │ YYYY-MM-DD hh:mm:ss   │        │                │        │ summarize_error: summarizer timed out │
        └─────────┴───────────────────────┴────────┴────────────────┴────────┴───────────────────────────────────────┘
        1 attempt: 0 committed, 1 failed; 0 tokens saved.
        """)
    everything = json.loads(run("audit", "--json").stdout)
    assert [(a["session_id"], a["status"], a["tokens_saved"]) for a in everything] == [
        ("trip", "failed", None),
        ("trip", "committed", 300),
    ]
    assert run("audit", "chat").stdout == "No compaction attempts.\n"
    assert run("audit", "chat", "--failed").stdout == "No failed compaction attempts.\n"


def test_audit_json_has_every_field_of_the_library_audit(run: Run, populated: str) -> None:
    with TranscriptStore.open(populated) as store:
        stored = store.compactions("trip")
    entries = json.loads(run("audit", "trip", "--json").stdout)
    assert [entry["id"] for entry in entries] == [attempt["id"] for attempt in stored]
    assert entries[0]["failure"] == "summarize_error"
    assert entries[0]["error"] == "summarizer timed out"
    assert entries[1]["superseded"] == ["m2", "m3", "m4", "m5"]
    assert (entries[1]["tokens_before"], entries[1]["tokens_after"]) == (400, 100)


def test_events_prints_the_raw_log_one_event_per_version(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("events", "trip")) == table("""\
                                                       Events of trip
        ┏━━━┳━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ v ┃ at (UTC)            ┃ type                ┃ data                                                      ┃
        ┡━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ 1 │ YYYY-MM-DD hh:mm:ss │ Started             │ source=test, model=model-a                                │
        │ 2 │ YYYY-MM-DD hh:mm:ss │ MessageAppended     │ m1 system: You plan trips.                                │
        │ 3 │ YYYY-MM-DD hh:mm:ss │ MessageAppended     │ m2 user: Three days in Lisbon?                            │
        │ 4 │ YYYY-MM-DD hh:mm:ss │ MessageAppended     │ m3 assistant: Alfama, Belém, Sintra.                      │
        │ 5 │ YYYY-MM-DD hh:mm:ss │ MessageAppended     │ m4 assistant: calls forecast({"city": "Lisbon"})          │
        │ 6 │ YYYY-MM-DD hh:mm:ss │ MessageAppended     │ m5 tool: 17°C, showers.                                   │
        │ 7 │ YYYY-MM-DD hh:mm:ss │ MessageAppended     │ m6 user: Where to eat?                                    │
        │ 8 │ YYYY-MM-DD hh:mm:ss │ CompactionFailed    │ cmp_xxxxxxxx… summarize_error: summarizer timed out       │
        │ 9 │ YYYY-MM-DD hh:mm:ss │ CompactionCommitted │ cmp_xxxxxxxx… superseded 4, kept 2, added 1 (over budget) │
        └───┴─────────────────────┴─────────────────────┴───────────────────────────────────────────────────────────┘
        """)


def test_events_json_gives_each_event_with_its_data(run: Run, populated: str) -> None:
    events = json.loads(run("events", "chat", "--json").stdout)
    assert [(event["version"], event["type"]) for event in events] == [
        (1, "Started"),
        (2, "MessageAppended"),
        (3, "MessageAppended"),
    ]
    assert events[0]["data"]["parent_id"] == "trip"
    assert events[1]["data"]["message"] == {"role": "user", "content": "Hello"}


def test_explain_says_who_superseded_a_message_and_why(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("explain", "trip", "m2")) == table("""\
        Message m2 of session trip
          role:        user
          added:       by MessageAppended, at version 3, YYYY-MM-DD hh:mm:ss UTC
          in context:  no: superseded by compaction cmp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx at version 9, YYYY-MM-DD hh:mm:ss UTC (over budget)
          content:     Three days in Lisbon?
        """)  # noqa: E501


def test_explain_says_where_an_active_message_is(
    run: Run, populated: str, output: Callable[[Result], str]
) -> None:
    assert output(run("explain", "trip", "m6")) == table("""\
        Message m6 of session trip
          role:        user
          added:       by MessageAppended, at version 7, YYYY-MM-DD hh:mm:ss UTC
          in context:  yes, at position 3
          content:     Where to eat?
        """)


def test_explain_names_the_compaction_that_added_a_summary(run: Run, populated: str) -> None:
    with TranscriptStore.open(populated) as store:
        summary = store.active("trip")[1]["id"]
        committed = store.compactions("trip")[1]["id"]
    explained = json.loads(run("explain", "trip", summary, "--json").stdout)
    assert explained["added"]["event"] == "CompactionCommitted"
    assert explained["added"]["compaction_id"] == committed
    lines = run("explain", "trip", summary).stdout.splitlines()
    assert lines[2].startswith(
        f"  added:       as a summary by compaction {committed} (over budget)"
    )


def test_explain_accepts_a_unique_start_of_an_id(run: Run, populated: str) -> None:
    with TranscriptStore.open(populated) as store:
        summary = store.active("trip")[1]["id"]
    shortened = summary[:12] + "…"
    assert run("explain", "trip", shortened).stdout.startswith(f"Message {summary} of session")


def test_explain_refuses_an_ambiguous_start_of_an_id(run: Run, populated: str) -> None:
    result = run("explain", "trip", "m")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: 'm' is the start of 7 message ids of session 'trip': give more of it\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("info",),
        ("sessions",),
        ("show", "trip"),
        ("show", "trip", "--as-of", "4"),
        ("history", "trip"),
        ("audit",),
        ("audit", "trip"),
        ("events", "trip"),
        ("explain", "trip", "m1"),
        ("projections", "status"),
        ("projections", "verify"),
    ],
    ids=" ".join,
)
def test_every_listing_command_prints_json_for_programs(
    run: Run, populated: str, args: tuple[str, ...]
) -> None:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) not in (None, [], {})


def test_the_projections_commands_still_work(run: Run, populated: str) -> None:
    assert run("projections", "catch-up").stdout == "Projected 0 events.\n"
    assert run("projections", "rebuild").stdout == "Rebuilt the views from 12 events.\n"
    assert run("projections", "verify").stdout == "OK: the views of 2 sessions match the log.\n"
    assert json.loads(run("projections", "verify", "--json").stdout)["ok"] is True


def test_demo_runs_a_session_and_path_prints_the_default_file(run: Run, db: str) -> None:
    demo = run("demo")
    assert demo.exit_code == 0, demo.output
    assert "Compaction committed" in demo.stdout
    [session] = json.loads(run("sessions", "--json").stdout)
    assert (session["source"], session["compactions_committed"]) == ("demo", 1)
    assert run("path").stdout.strip().endswith("transcripts.db")


def test_the_store_url_can_come_from_the_environment(
    populated: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from transcripts.adapters.cli import cli

    monkeypatch.setenv("TRANSCRIPTS_URL", populated)
    result = CliRunner().invoke(cli, ["sessions", "--json"])
    assert [session["id"] for session in json.loads(result.stdout)] == ["trip", "chat"]


def test_events_names_the_state_keys_a_change_set_and_removed(
    run: Run, db: str, output: Callable[[Result], str]
) -> None:
    with TranscriptStore.open(db) as store:
        store.start("s")
        store.write("s", [SetState({"title": "Trip", "head": "m1"})])
        store.write("s", [SetState({"head": "m2"}, remove=["title"])])
    printed = output(run("events", "s"))
    assert "StateChanged │ set head, title " in printed
    assert "StateChanged │ set head; removed title " in printed
