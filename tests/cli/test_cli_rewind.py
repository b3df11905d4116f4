"""The command line and rewinds: `rewind` takes the tail of the context out, and `history`,
`explain`, `events`, `sessions`, `info` and the Markdown export show rewound and restored
messages and each rewind where it happened. Outputs compared exactly, as in test_cli.py."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import Result

from support.cli import Run, error_line, exported, table
from support.messages import TRIP
from transcripts import TranscriptStore

Output = Callable[[Result], str]


@pytest.fixture
def rewound(db: str) -> str:
    """Session `trip` (the six TRIP messages), m4 … m6 rewound at version 8 ("wrong turn"),
    m4 restored at version 9; returns the store URL."""
    with TranscriptStore.open(db) as store:
        store.start("trip", source="test", model="model-a")
        store.append("trip", TRIP)
        popped = store.rewind("trip", count=3, reason="wrong turn")
        store.append("trip", [popped[0]])
    return db


def test_history_marks_rewound_and_restored_messages_and_shows_the_rewind_where_it_happened(
    run: Run, rewound: str, output: Output
) -> None:
    assert output(run("history", "trip")) == table("""\
                   History of trip (6 messages, 0 compaction attempts, 1 rewind)
        ┏━━━┳━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ v ┃ id ┃ role      ┃ state                  ┃ content                            ┃
        ┡━━━╇━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ 2 │ m1 │ system    │ active                 │ You plan trips.                    │
        │ 3 │ m2 │ user      │ active                 │ Three days in Lisbon?              │
        │ 4 │ m3 │ assistant │ active                 │ Alfama, Belém, Sintra.             │
        │ 5 │ m4 │ assistant │ active, restored at v9 │ calls forecast({"city": "Lisbon"}) │
        │ 6 │ m5 │ tool      │ rewound by v8          │ 17°C, showers.                     │
        │ 7 │ m6 │ user      │ rewound by v8          │ Where to eat?                      │
        ├───┼────┼───────────┼────────────────────────┼────────────────────────────────────┤
        │ 8 │    │           │ rewind                 │ 3 rewound: m4, m5, m6 (wrong turn) │
        └───┴────┴───────────┴────────────────────────┴────────────────────────────────────┘
        """)  # noqa: E501
    entries = json.loads(run("history", "trip", "--json").stdout)
    assert [(e["id"], e["rewound"], e["version"]) for e in entries][3:] == [
        ("m4", False, 5),
        ("m5", True, 6),
        ("m6", True, 7),
    ]


def test_explain_says_when_a_message_was_rewound_and_when_one_was_restored(
    run: Run, rewound: str, output: Output
) -> None:
    assert output(run("explain", "trip", "m5")) == table("""\
        Message m5 of session trip
          role:        tool
          added:       by MessageAppended, at version 6, YYYY-MM-DD hh:mm:ss UTC
          in context:  no: rewound at version 8, YYYY-MM-DD hh:mm:ss UTC (wrong turn)
          content:     17°C, showers.
        """)
    assert output(run("explain", "trip", "m4")) == table("""\
        Message m4 of session trip
          role:        assistant
          added:       by MessageAppended, at version 5, YYYY-MM-DD hh:mm:ss UTC
          restored:    by MessageAppended, at version 9, YYYY-MM-DD hh:mm:ss UTC
          in context:  yes, at position 4
          content:     calls forecast({"city": "Lisbon"})
        """)
    explained = json.loads(run("explain", "trip", "m6", "--json").stdout)
    assert (explained["rewound"]["version"], explained["rewound"]["reason"]) == (8, "wrong turn")


def test_events_render_the_rewind_s_data_on_its_line(
    run: Run, rewound: str, output: Output
) -> None:
    lines = output(run("events", "trip")).splitlines()
    assert "│ 8 │ YYYY-MM-DD hh:mm:ss │ Rewound         │ rewound 3: m4, m5, m6 (wrong turn)" in (
        "\n".join(lines)
    )
    assert (
        '│ 9 │ YYYY-MM-DD hh:mm:ss │ MessageAppended │ m4 assistant: calls forecast({"city": '
        '"Lisbon"}) │'
    ) in lines
    [event] = [e for e in json.loads(run("events", "trip", "--json").stdout) if e["version"] == 8]
    assert event["data"] == {"message_ids": ["m4", "m5", "m6"], "reason": "wrong turn"}


def test_sessions_and_info_count_the_rewound_messages(
    run: Run, rewound: str, output: Output
) -> None:
    assert (
        "│ trip    │ test   │ model-a │ YYYY-MM-DD hh:mm │ YYYY-MM-DD hh:mm │      4 │      6 │       2 │"
        in (  # noqa: E501
            output(run("sessions"))
        )
    )
    assert "Messages:     6 stored, 4 active, 2 rewound" in output(run("info"))
    assert json.loads(run("info", "--json").stdout)["rewound"] == 2


def test_the_markdown_history_marks_rewound_messages_and_shows_the_rewind(
    run: Run, rewound: str, output: Output
) -> None:
    markdown = output(run("export", "trip", "--format", "md", "--history"))
    assert "### 4. assistant · `m4` · restored at version 9" in markdown
    assert "### 6. user · `m6` · rewound at version 8" in markdown
    assert (
        "> **Rewind** at version 8, YYYY-MM-DD hh:mm:ss UTC: 3 rewound: m4, m5, m6 (wrong turn)"
        in (markdown)
    )
    assert [m["id"] for m in exported(rewound, "trip")] == ["m1", "m2", "m3", "m4"]


def test_rewind_prints_the_messages_it_took_out_of_the_context(
    run: Run, rewound: str, output: Output
) -> None:
    assert output(run("rewind", "trip", "--count", "1", "--reason", "again")) == table("""\
                       Rewound from trip (1 message)
        ┏━━━┳━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ # ┃ id ┃ role      ┃ content                            ┃
        ┡━━━╇━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
        │ 1 │ m4 │ assistant │ calls forecast({"city": "Lisbon"}) │
        └───┴────┴───────────┴────────────────────────────────────┘
                                 1 message
        """)
    assert json.loads(run("rewind", "trip", "--to", "m1", "--json").stdout) == TRIP[1:3]
    assert run("rewind", "trip", "--to", "m1").stdout == "Nothing to rewind in trip.\n"
    with TranscriptStore.open(rewound) as store:
        assert store.active("trip") == TRIP[:1]
        assert store.events("trip")[-1]["data"]["reason"] == ""


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--to", "m6"), "Error: message 'm6' of session 'trip' is not active"),
        (("--to", "nope"), "Error: session 'trip' has no message 'nope'"),
    ],
    ids=["a message that is not active", "a message never stored"],
)
def test_rewind_to_a_message_it_cannot_go_back_to_is_one_line_and_exit_1(
    run: Run, rewound: str, args: tuple[str, ...], line: str
) -> None:
    assert error_line(run("rewind", "trip", *args)).startswith(line)
    assert error_line(run("rewind", "nowhere", "--count", "1")) == (
        "Error: session 'nowhere' was never started"
    )


@pytest.mark.parametrize(
    "args", [(), ("--count", "1", "--to", "m1"), ("--count", "0")], ids=["neither", "both", "0"]
)
def test_rewind_without_exactly_one_count_or_to_is_a_usage_error(
    run: Run, rewound: str, args: tuple[str, ...]
) -> None:
    result = run("rewind", "trip", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
