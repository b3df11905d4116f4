"""Full-text search on PostgreSQL: stored text and search vectors of `message_history`,
GIN-indexed."""

from __future__ import annotations

import hashlib

from support.postgres import connect, sql
from transcripts import TranscriptStore

INDEX = "message_search_vector"


def search_indexes(url: str) -> list[tuple[str, str]]:
    return sql(
        url,
        "SELECT tablename, indexname FROM pg_indexes "
        "WHERE schemaname = 'public' AND indexdef LIKE %s ORDER BY 1, 2",
        ("%USING gin%",),
    )


def test_queries_use_the_index_and_a_rebuild_keeps_exactly_one(postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("s")
        store.append(
            "s", [{"role": "user", "content": f"message {i} about trams"} for i in range(50)]
        )
        assert search_indexes(postgres_url) == [("message_search", INDEX)]
        store.rebuild_projections()
        store.rebuild_projections()
        assert search_indexes(postgres_url) == [("message_search", INDEX)]
        assert len(store.search("tram", limit=100)) == 50
        store.append("s", [{"role": "user", "content": "a tram after the rebuilds"}])
        assert len(store.search("tram", limit=100)) == 51
    with connect(postgres_url) as connection:  # 51 rows: make the planner show its choice
        connection.execute("SET enable_seqscan = off")
        plan = connection.execute(
            "EXPLAIN SELECT message_id FROM message_search "
            "WHERE vector @@ websearch_to_tsquery('pg_catalog.english', 'trams')"
        ).fetchall()
    assert INDEX in " ".join(line for (line,) in plan)


def test_a_store_of_a_release_before_search_gets_its_search_table_filled_when_opened(
    postgres_url: str,
) -> None:
    with TranscriptStore.open(postgres_url) as store:
        store.start("s")
        store.append("s", [{"role": "user", "content": "Lisbon trams"}])
    sql(postgres_url, "DROP TABLE message_search")  # and the views of that release's versions
    sql(postgres_url, "UPDATE view_versions SET version = 1")
    with TranscriptStore.open(postgres_url) as store:
        assert search_indexes(postgres_url) == [("message_search", INDEX)]
        assert [hit["snippet"] for hit in store.search("lisbon")] == ["«Lisbon» trams"]
        store.append("s", [{"role": "user", "content": "more Lisbon"}])
        assert len(store.search("lisbon")) == 2


def test_odd_messages_are_projected_and_searched_never_quarantined(postgres_url: str) -> None:
    huge = " ".join(hashlib.md5(str(i).encode()).hexdigest() for i in range(40_000))
    odd = [
        {"role": "user", "content": "a fox\u0000 and a NUL"},
        {"role": "user", "content": "a backslash \\u0000 in prose about owls"},
        {"role": "user", "content": ["plain string part", {"text": 42}, {"type": "image"}]},
        {"role": "assistant", "content": None, "tool_calls": {"not": "a list"}},
        {"role": "assistant", "content": None, "tool_calls": [7, {"function": "badgers"}]},
        {"role": "tool", "tool_call_id": "x", "content": {"an": "object"}},
        {"role": "tool", "tool_call_id": "y", "content": "hedgehogs " + huge},
    ]
    with TranscriptStore.open(postgres_url) as store:
        store.start("odd")
        store.append("odd", odd)
        assert len(store.active("odd")) == len(odd)
        assert store.verify_projections().ok
        assert [h["snippet"] for h in store.search("fox")] == ["a «fox» and a NUL"]
        assert len(store.search("owls")) == 1
        assert len(store.search("hedgehogs")) == 1  # indexed by the prefix that fits
        assert store.search("fox", session_id="odd\u0000") == []
        assert len(store.search("fox\u0000")) == 1
