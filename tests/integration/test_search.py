"""Full-text search over every message ever stored, superseded ones included, on every backend.

SQLite (and memory) search with FTS5, PostgreSQL with its own full-text search: the same
API, the same hits for words, phrases and FTS5's `OR` / `NOT`. Where the query languages
differ, the expectations below say so per engine.
"""

from __future__ import annotations

import pytest

from transcripts import TranscriptStore
from transcripts.domain.errors import InvalidSearchError, TranscriptError

OTHER = 'other\'s "session"'
CONVERSATION = [
    {"role": "system", "content": "You are a travel assistant."},
    {"role": "user", "content": "Plan three days in Lisbon with foxes and trams."},
    {"role": "assistant", "content": [{"type": "text", "text": "Ride tram 28 through Alfama."}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "forecast", "arguments": '{"city": "Porto"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Porto: rain all week."},
]


@pytest.fixture
def engine(backend: str) -> str:
    """The full-text engine of the backend: `fts5` (SQLite, memory) or `postgres`."""
    return "postgres" if backend == "postgres" else "fts5"


@pytest.fixture
def searchable(store: TranscriptStore) -> TranscriptStore:
    store.start("trip")
    store.append("trip", CONVERSATION)
    store.start(OTHER)
    store.append(OTHER, [{"role": "user", "content": "Lisbon again, no trams."}])
    return store


def found(hits: list[dict]) -> set[tuple[str, str]]:
    return {(hit["session_id"], hit["role"]) for hit in hits}


def test_search_finds_text_content_parts_and_tool_call_arguments(
    searchable: TranscriptStore,
) -> None:
    assert [hit["role"] for hit in searchable.search("alfama")] == ["assistant"]
    assert sorted(hit["role"] for hit in searchable.search("porto")) == ["assistant", "tool"]
    assert [hit["role"] for hit in searchable.search("forecast")] == ["assistant"]


def test_words_match_by_their_stem_and_matches_are_marked_in_the_snippet(
    searchable: TranscriptStore,
) -> None:
    hits = searchable.search("fox")
    assert len(hits) == 1
    assert "«foxes»" in hits[0]["snippet"]


def test_superseded_messages_stay_searchable_and_active_only_leaves_them_out(
    searchable: TranscriptStore,
) -> None:
    summary = {"role": "user", "content": "Summary: a trip."}
    searchable.compact("trip", lambda messages: [messages[0], summary])
    hits = searchable.search("alfama")
    assert [(hit["session_id"], hit["active"]) for hit in hits] == [("trip", False)]
    assert searchable.search("alfama", active_only=True) == []
    assert [hit["active"] for hit in searchable.search("summary")] == [True]


def test_search_filters_by_session_and_role(searchable: TranscriptStore) -> None:
    assert {hit["session_id"] for hit in searchable.search("lisbon")} == {"trip", OTHER}
    hits = searchable.search("lisbon", session_id=OTHER)
    assert [hit["session_id"] for hit in hits] == [OTHER]
    assert searchable.search("lisbon", role="assistant") == []
    assert searchable.search("lisbon", session_id="' OR 1=1 --") == []


def test_the_best_match_comes_first_and_the_limit_holds(searchable: TranscriptStore) -> None:
    searchable.append("trip", [{"role": "user", "content": "trams trams trams"}])
    hits = searchable.search("trams")
    assert hits[0]["snippet"].count("«trams»") == 3
    assert [hit["rank"] for hit in hits] == sorted(hit["rank"] for hit in hits)
    assert len(searchable.search("trams", limit=1)) == 1


def test_phrases_and_fts5_or_and_not_find_the_same_on_every_backend(
    searchable: TranscriptStore,
) -> None:
    assert found(searchable.search('"tram 28"')) == {("trip", "assistant")}
    assert found(searchable.search('"28 tram"')) == set()
    assert found(searchable.search("lisbon OR rain")) == {
        ("trip", "user"),
        ("trip", "tool"),
        (OTHER, "user"),
    }
    assert found(searchable.search("lisbon NOT foxes")) == {(OTHER, "user")}
    assert found(searchable.search("lisbon AND foxes")) == {("trip", "user")}


def test_search_follows_a_rebuild_of_the_views(searchable: TranscriptStore) -> None:
    before = searchable.search("lisbon OR porto")
    searchable.rebuild_projections()
    assert searchable.search("lisbon OR porto") == before
    searchable.append("trip", [{"role": "user", "content": "And Sintra?"}])
    assert len(searchable.search("sintra")) == 1


INVALID_EVERYWHERE = ["*", "(", "   ", "", "-lisbon", "NOT lisbon"]
DROP = "'; DROP TABLE stored_events; --"
FTS5_ERRORS = ['"unbalanced', "lisbon AND", "NEAR(", "session_id:", "lisbon -foxes", DROP]
INVALID = {
    "fts5": FTS5_ERRORS,  # syntax errors
    "postgres": ["the", "lisbon OR -porto"],  # only stop words, or only words to leave out
}
SEARCHED_FOR = {
    "fts5": ["the"],  # FTS5 has no stop words
    "postgres": FTS5_ERRORS,  # websearch syntax cannot fail: the words are searched for
}


def test_a_query_with_nothing_to_search_for_is_an_invalid_search_error(
    searchable: TranscriptStore, engine: str
) -> None:
    before = searchable.events("trip")
    for query in [*INVALID_EVERYWHERE, *INVALID[engine]]:
        with pytest.raises(InvalidSearchError) as raised:
            searchable.search(query)
        assert isinstance(raised.value, TranscriptError) and isinstance(raised.value, ValueError)
    assert searchable.events("trip") == before
    assert len(searchable.search("lisbon")) == 2


def test_hostile_queries_are_only_ever_searched_for(
    searchable: TranscriptStore, engine: str
) -> None:
    before = searchable.events("trip")
    for query in SEARCHED_FOR[engine]:
        assert isinstance(searchable.search(query), list)
    assert searchable.events("trip") == before
    assert len(searchable.search("lisbon")) == 2


def test_postgres_reads_fts5_syntax_it_lacks_as_words(
    searchable: TranscriptStore, engine: str
) -> None:
    """NEAR, prefix* and parentheses are FTS5 syntax; PostgreSQL searches the words."""
    near = searchable.search("NEAR(lisbon trams)")
    grouped = found(searchable.search("(lisbon OR porto) AND rain"))
    if engine == "fts5":
        assert found(near) == {("trip", "user"), (OTHER, "user")}
        assert grouped == {("trip", "tool")}
        assert found(searchable.search("alf*")) == {("trip", "assistant")}
    else:
        assert near == []  # no message says "near"
        assert grouped == {("trip", "tool"), ("trip", "user"), (OTHER, "user")}  # lisbon OR …
        assert searchable.search("alf*") == []  # "alf" is a word of its own


def test_sql_in_a_query_is_only_ever_searched_for(searchable: TranscriptStore) -> None:
    searchable.append("trip", [{"role": "user", "content": "robert'); DROP TABLE students;"}])
    hits = searchable.search('"DROP TABLE students"')
    assert len(hits) == 1
    assert searchable.active("trip")[-1]["content"] == "robert'); DROP TABLE students;"
