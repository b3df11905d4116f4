"""Full-text search over every message ever stored, superseded ones included."""

from __future__ import annotations

import pytest

from transcripts import TranscriptStore
from transcripts.domain.errors import InvalidSearchError, TranscriptError

CONVERSATION = [
    {"role": "system", "content": "You are a travel assistant."},
    {"role": "user", "content": "Plan three days in Lisbon with foxes and trams."},
    {"role": "assistant", "content": [{"type": "text", "text": "Ride tram 28 through Alfama."}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "forecast", "arguments": '{"city": "Porto"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Porto: rain all week."},
]


@pytest.fixture(params=["memory", "sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    """Full-text search is SQLite FTS5: these tests run on the SQLite backends only."""
    return request.param


@pytest.fixture
def searchable(store: TranscriptStore) -> TranscriptStore:
    store.start("trip")
    store.append("trip", CONVERSATION)
    store.start("other's \"session\"")
    store.append("other's \"session\"", [{"role": "user", "content": "Lisbon again, no trams."}])
    return store


def texts(hits: list[dict]) -> list[str]:
    return [hit["snippet"] for hit in hits]


def test_search_finds_text_content_parts_and_tool_call_arguments(searchable: TranscriptStore) -> None:
    assert [hit["role"] for hit in searchable.search("alfama")] == ["assistant"]
    assert sorted(hit["role"] for hit in searchable.search("porto")) == ["assistant", "tool"]


def test_words_match_by_their_stem_and_matches_are_marked_in_the_snippet(
    searchable: TranscriptStore,
) -> None:
    hits = searchable.search("fox")
    assert len(hits) == 1
    assert "«foxes»" in hits[0]["snippet"]


def test_superseded_messages_stay_searchable_and_active_only_leaves_them_out(
    searchable: TranscriptStore,
) -> None:
    searchable.compact("trip", lambda messages: [messages[0], {"role": "user", "content": "Summary: a trip."}])
    hits = searchable.search("alfama")
    assert [(hit["session_id"], hit["active"]) for hit in hits] == [("trip", False)]
    assert searchable.search("alfama", active_only=True) == []
    assert [hit["active"] for hit in searchable.search("summary")] == [True]


def test_search_filters_by_session_and_role(searchable: TranscriptStore) -> None:
    assert {hit["session_id"] for hit in searchable.search("lisbon")} == {"trip", "other's \"session\""}
    assert [hit["session_id"] for hit in searchable.search("lisbon", session_id="other's \"session\"")] == [
        "other's \"session\""
    ]
    assert searchable.search("lisbon", role="assistant") == []


def test_the_best_match_comes_first_and_the_limit_holds(searchable: TranscriptStore) -> None:
    searchable.append("trip", [{"role": "user", "content": "trams trams trams"}])
    hits = searchable.search("trams")
    assert hits[0]["snippet"].count("«trams»") == 3
    assert [hit["rank"] for hit in hits] == sorted(hit["rank"] for hit in hits)
    assert len(searchable.search("trams", limit=1)) == 1


def test_search_follows_a_rebuild_of_the_views(searchable: TranscriptStore) -> None:
    before = searchable.search("lisbon OR porto")
    searchable.rebuild_projections()
    assert searchable.search("lisbon OR porto") == before
    searchable.append("trip", [{"role": "user", "content": "And Sintra?"}])
    assert len(searchable.search("sintra")) == 1


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "lisbon AND", "NEAR(", "session_id:", "*", "(", "'; DROP TABLE stored_events; --", "   "],
)
def test_hostile_query_syntax_is_an_invalid_search_error_and_changes_nothing(
    searchable: TranscriptStore, query: str
) -> None:
    before = searchable.events("trip")
    with pytest.raises(InvalidSearchError) as raised:
        searchable.search(query)
    assert isinstance(raised.value, TranscriptError) and isinstance(raised.value, ValueError)
    assert searchable.events("trip") == before
    assert len(searchable.search("lisbon")) == 2


def test_sql_in_a_query_is_only_ever_searched_for(searchable: TranscriptStore) -> None:
    searchable.append("trip", [{"role": "user", "content": "robert'); DROP TABLE students;"}])
    hits = searchable.search('"DROP TABLE students"')
    assert len(hits) == 1
    assert searchable.active("trip")[-1]["content"] == "robert'); DROP TABLE students;"
