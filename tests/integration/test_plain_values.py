"""Every input the validator accepts can be stored: values of subclasses of JSON types — a
float subclass (as numpy.float64 is), an int subclass (an IntEnum), text and keys of a str
subclass, dict and list subclasses — are stored as their plain values, in `append`, `sync`,
`start(metadata=…)`, `commit_compaction` (its metadata too), `compact` and a session's
state, and read back as plain values (the
encoder refused a float subclass with a bare TypeError). And `compact` never raises once it
began: what does not commit is recorded, or answered unrecorded if the session is gone."""

from __future__ import annotations

import enum
from collections import OrderedDict
from typing import Any

import pytest

from support.messages import summary, turns
from transcripts import SetState, TranscriptStore


class Reading(float):
    """A float subclass with a repr of its own, as numpy.float64 has."""

    def __repr__(self) -> str:
        return f"Reading({float(self)})"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    def __str__(self) -> str:  # not what is stored
        return "a name of its own"


class Parts(list):  # type: ignore[type-arg]
    pass


def subclassed(text: str) -> dict[str, Any]:
    return {
        "role": Name("user"),
        "content": Parts([{"type": "text", "text": Name(text)}]),
        "scores": OrderedDict([(Name("temperature"), Reading(0.25)), ("level", Level.HIGH)]),
    }


def plain(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "scores": {"temperature": 0.25, "level": 3},
    }


def exactly_plain(value: object) -> bool:
    """Whether `value` holds plain JSON types only (no subclass anywhere)."""
    if isinstance(value, dict):
        return type(value) is dict and all(
            type(key) is str and exactly_plain(item) for key, item in value.items()
        )
    if isinstance(value, list):
        return type(value) is list and all(exactly_plain(item) for item in value)
    return value is None or type(value) in (bool, int, float, str)


def without_id(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "id"}


def test_subclassed_values_are_stored_and_read_back_as_plain_values(store_url: str) -> None:
    with TranscriptStore.open(store_url) as store:
        store.start("s", metadata={"cost": Reading(0.5), Name("tier"): Level.HIGH})
        (appended,) = store.append("s", [subclassed("appended")])
        synced = store.sync("s", [appended, subclassed("synced")])
        attempt = store.begin_compaction("s")
        result = store.commit_compaction(
            attempt, [subclassed("summary"), synced[-1]], metadata={"cost": Reading(0.5)}
        )
        assert result.committed, result.error
        store.write("s", [SetState({"progress": Reading(0.5), Name("level"): Level.HIGH})])
        compacted = store.compact("s", lambda live: [subclassed("again"), *live[-1:]])
        assert compacted.committed, compacted.error
        returned = [appended, *synced, *result.messages, *compacted.messages]
        assert all(exactly_plain(message) for message in returned)
        assert without_id(appended) == plain("appended")
        assert [without_id(m) for m in store.active("s")] == [plain("again"), plain("synced")]
        [session] = store.sessions()
        assert session["metadata"] == {"cost": 0.5, "tier": 3}
        assert session["state"] == {"progress": 0.5, "level": 3}
        assert store.compactions("s")[0]["metadata"] == {"cost": 0.5}
        events = store.events("s")
        assert all(exactly_plain(event["data"]) for event in events)


def test_a_store_opened_afresh_reads_them_plain_and_knows_their_content(durable_url: str) -> None:
    with TranscriptStore.open(durable_url) as store:
        store.start("s")
        (appended,) = store.append("s", [subclassed("appended")])
    with TranscriptStore.open(durable_url) as fresh:
        assert [entry["message"] for entry in fresh.history("s")] == [appended]
        assert exactly_plain(fresh.history("s")[0]["message"])
        again = {**subclassed("appended"), "id": appended["id"]}
        assert fresh.append("s", [again]) == [appended]  # its content: a no-op, no conflict
        assert len(fresh.events("s")) == 2


def test_a_subclassed_value_nested_too_deep_is_refused_as_any_value_is(store_url: str) -> None:
    from transcripts import InvalidMessageError

    nested: Any = Reading(1.0)
    for _ in range(150):
        nested = Parts([nested])
    with TranscriptStore.open(store_url) as store:
        store.start("s")
        with pytest.raises(InvalidMessageError, match="nested deeper than 100 levels"):
            store.append("s", [{"role": "user", "content": nested}])
        assert store.events("s")[1:] == []


def test_numpy_values_are_stored_as_plain_numbers(store_url: str) -> None:
    numpy = pytest.importorskip("numpy")
    with TranscriptStore.open(store_url) as store:
        store.start("s", metadata={"p": numpy.float64(0.5)})
        (stored,) = store.append("s", [{"role": "user", "content": "x", "p": numpy.float64(2.5)}])
        assert type(stored["p"]) is float and store.active("s")[0]["p"] == 2.5


class Unreadable(list):  # type: ignore[type-arg]
    """A replacement whose items cannot be read."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("the summarizer's list broke")


def test_compact_records_a_replacement_it_cannot_read_and_does_not_raise(store_url: str) -> None:
    with TranscriptStore.open(store_url) as store:
        store.start("s")
        live = store.append("s", turns(3))
        result = store.compact("s", lambda messages: Unreadable(messages))
        assert (result.committed, result.failure) == (False, "invalid_replacement")
        assert "the summarizer's list broke" in (result.error or "")
        assert result.messages == live == store.active("s")
        assert [entry["failure"] for entry in store.compactions("s")] == ["invalid_replacement"]


def test_compact_of_a_session_erased_while_it_summarized_answers_without_raising(
    store_url: str,
) -> None:
    with TranscriptStore.open(store_url) as store:
        store.start("s")
        store.append("s", turns(3))

        def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            store.forget("s")  # another caller erases the session meanwhile
            return [summary()]

        result = store.compact("s", summarize)
        assert (result.committed, result.failure, result.messages) == (False, "conflict", [])
        assert "was erased" in (result.error or "")
