"""The write side's index of message ids: what events do to it, as the aggregate applies
them (the last event of an id decides), and the whole index of a replayed transcript."""

from __future__ import annotations

from support.events import collect, commit, replay, start
from support.messages import summary
from transcripts.domain.id_index import IndexChanges, IndexEntry, id_key, id_of_key
from transcripts.domain.messages import content_hash, new_message_id


def hashed(message: dict) -> str:
    return content_hash({key: value for key, value in message.items() if key != "id"})


M1 = {"id": "m1", "role": "user", "content": "one"}
M2 = {"id": "m2", "role": "assistant", "content": "two"}


def test_appends_rewinds_restores_and_a_compaction_give_each_id_its_last_state() -> None:
    transcript = start()
    transcript.append([M1, M2])
    transcript.rewind(["m2"], reason="undo")
    transcript.append([M2])  # a restore
    transcript.rewind(transcript.rewind_target(count=1, to=None), reason="again")
    commit(transcript, [summary()])
    events = collect(transcript)
    changes = IndexChanges.of(events)
    [added] = events[-1].added
    assert changes.version == events[-1].originator_version
    assert changes.entries == {
        "m1": IndexEntry(hashed(M1), False),  # superseded: stored, not rewound
        "m2": IndexEntry(hashed(M2), True),
        added["id"]: IndexEntry(added["content_hash"], False),
    }
    assert not changes.replace
    assert IndexChanges.whole(replay(events)) == IndexChanges(
        changes.version, changes.entries, True
    )


def test_a_rewind_of_an_id_stored_before_marks_it_without_a_hash() -> None:
    transcript = start()
    transcript.append([M1])
    stored = collect(transcript)
    transcript.rewind(["m1"], reason="undo")
    [rewound] = collect(transcript)
    assert IndexChanges(len(stored)).apply([rewound]).entries == {"m1": IndexEntry(None, True)}


def test_an_erasure_replaces_every_entry_of_the_stream() -> None:
    transcript = start()
    transcript.append([M1])
    transcript.erase()
    changes = IndexChanges.of(collect(transcript))
    assert (changes.entries, changes.replace, changes.version) == ({}, True, 3)


def test_the_keys_of_generated_ids_keep_their_order_so_new_ids_land_at_the_end() -> None:
    ids = [new_message_id() for _ in range(200)]
    assert sorted(ids, key=id_key) == sorted(ids)
    assert [id_of_key(id_key(i)) for i in ids] == ids


def test_a_long_id_is_keyed_by_its_prefix_and_digest_and_never_equals_a_whole_ids_key() -> None:
    long, longer = "x" * 64 + "a", "x" * 64 + "b"
    keys = {id_key(i) for i in ["x" * 64, long, longer, "\ud800" * 30, "é" * 33]}
    assert len(keys) == 5
    assert id_key(long)[:64] == id_key(longer)[:64] and id_key(long) != id_key(longer)
    assert max(len(key) for key in keys) == 96
    assert id_of_key(id_key(long)) is None and id_of_key(id_key("é" * 32)) == "é" * 32
