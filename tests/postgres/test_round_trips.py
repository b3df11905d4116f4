"""Round trips to the PostgreSQL server, counted on the wire by a proxy in front of it."""

from __future__ import annotations

from support.wire import RoundTripCounter
from transcripts import TranscriptStore

WARM_UP_CALLS = 5  # each pooled connection sets its planner costs once, on its first read


def test_active_reads_a_session_whose_views_are_current_in_one_round_trip(
    postgres_url: str,
) -> None:
    with RoundTripCounter(postgres_url) as wire, TranscriptStore.open(wire.url) as store:
        store.start("s")
        stored = store.append("s", [{"role": "user", "content": f"m{i}"} for i in range(50)])
        for _ in range(WARM_UP_CALLS):
            store.active("s")
        trips = []
        for _ in range(5):
            with wire.counting() as made:
                assert store.active("s") == stored
            trips += made
    assert trips == [1] * 5


def test_an_append_to_a_started_session_makes_at_most_three_round_trips(postgres_url: str) -> None:
    with RoundTripCounter(postgres_url) as wire, TranscriptStore.open(wire.url) as store:
        store.start("s")
        for i in range(WARM_UP_CALLS):
            store.append("s", [{"role": "user", "content": f"warm-up {i}"}])
        trips = []
        for i in range(5):
            with wire.counting() as made:
                store.append("s", [{"role": "user", "content": f"m{i}"}])
            trips += made
        assert [message["content"] for message in store.active("s")][-5:] == [
            f"m{i}" for i in range(5)
        ]
    assert max(trips) <= 3, trips
