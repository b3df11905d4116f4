"""Every public method of `TranscriptStore` answers arguments of the wrong type or range
with a `TranscriptError` (an `InvalidMessageError` where it is about a message), never with
AttributeError, TypeError, OverflowError or the event-sourcing library's or a driver's
errors, on every backend, and a refused call changes nothing.

Known today: `search(None)` (AttributeError), `search("a", limit=2**70)` and
`active_at(s, 2**70)` (OverflowError), `history(["s"])` (a driver's ProgrammingError).
Huge integers where a count or version is asked may also be answered (a version past the
last one is the last one) but never crash; and whatever a call accepts must be visible and
verified afterwards, never acknowledged and then quarantined.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from support.reads import snapshot
from transcripts import (
    CompactionResult,
    InvalidMessageError,
    TranscriptError,
    TranscriptStore,
)

S = "s"
HUGE = 2**70
BIG = 2**63  # one past the largest signed 64-bit integer

REFUSE = "refuse"  # must raise TranscriptError
MESSAGE = "message"  # must raise InvalidMessageError
REFUSE_OR_ANSWER = "refuse or answer"  # TranscriptError, or an answer (nothing else)
REFUSE_OR_FAIL = "refuse or record a failure"  # TranscriptError, or invalid_replacement
REFUSE_OR_ACCEPT = "refuse or accept"  # TranscriptError, or stored and visible as given


@dataclass
class Case:
    call: Callable[[TranscriptStore, Any], object]
    expect: str = REFUSE
    check: Callable[[TranscriptStore], None] | None = None  # what an acceptance must show


def _attempt(store: TranscriptStore, attempt: Any) -> Any:
    return attempt


NOT_TEXT = {
    "None": None,
    "an int": 5,
    "a float": 1.5,
    "a bool": True,
    "a list": ["s"],
    "a dict": {"s": 1},
    "bytes": b"s",
}
NOT_INT = {
    "None": None,
    "a string": "2",
    "a float": 2.0,
    "a bool": True,
    "a list": [2],
    "bytes": b"2",
}
NOT_CALLABLE = {"None": None, "an int": 5, "a string": "summarize", "a list": [], "a dict": {}}
NOT_MESSAGES = {
    "None": None,
    "an int": 5,
    "a string": "hello",
    "bytes": b"hello",
    "a lone message": {"role": "user", "content": "x"},
    "a list holding None": [None],
    "a list holding an int": [5],
    "a list holding a string": ["hello"],
    "a list holding a list": [["role", "user"]],
    "a list holding bytes": [b"{}"],
    "a message with a bytes id": [{"id": b"m", "role": "user", "content": "x"}],
    "a message with an int id": [{"id": 5, "role": "user", "content": "x"}],
    "a message with a bytes value": [{"role": "user", "content": b"x"}],
    "a message with a set": [{"role": "user", "content": {"a"}}],
    "a message with a tuple key": [{"role": "user", ("a",): 1}],
    "a message with a huge int": [{"role": "user", "content": HUGE}],
    "a message with NaN": [{"role": "user", "content": float("nan")}],
}

CASES: dict[str, Case] = {}


def add(
    name: str,
    call: Callable[[TranscriptStore, Any], object],
    expect: str = REFUSE,
    check: Callable[[TranscriptStore], None] | None = None,
) -> None:
    assert name not in CASES, name
    CASES[name] = Case(call, expect, check)


def _audited(side: str, value: int) -> Callable[[TranscriptStore], None]:
    def check(store: TranscriptStore) -> None:
        assert store.compactions(S)[-1][side] == value

    return check


# -- one session id argument ---------------------------------------------------------------
SESSION_CALLS: dict[str, Callable[[TranscriptStore, Any], object]] = {
    "start": lambda st, v: st.start(v),
    "append": lambda st, v: st.append(v, [{"role": "user", "content": "x"}]),
    "sync": lambda st, v: st.sync(v, [{"role": "user", "content": "x"}]),
    "active": lambda st, v: st.active(v),
    "active_at": lambda st, v: st.active_at(v, 1),
    "history": lambda st, v: st.history(v),
    "compactions": lambda st, v: st.compactions(v),
    "events": lambda st, v: st.events(v),
    "explain": lambda st, v: st.explain(v, "m1"),
    "begin_compaction": lambda st, v: st.begin_compaction(v),
    "compact": lambda st, v: st.compact(v, lambda ms: ms[:1]),
    "forget": lambda st, v: st.forget(v),
    "rewind": lambda st, v: st.rewind(v, count=1),
    "search session_id": lambda st, v: st.search("hello", session_id=v),
    "start parent_id": lambda st, v: st.start("child", parent_id=v),
}
for method, call in SESSION_CALLS.items():
    for kind, value in NOT_TEXT.items():
        if method == "start parent_id" and value is None:
            continue  # no parent: the default
        if method == "search session_id" and value is None:
            continue  # no filter: the default
        add(f"{method}: session id is {kind}", lambda st, a, c=call, v=value: c(st, v))

# -- start -----------------------------------------------------------------------------------
for kind, value in NOT_TEXT.items():
    if value is not None:
        add(f"start: source is {kind}", lambda st, a, v=value: st.start("n", source=v))
        add(f"start: model is {kind}", lambda st, a, v=value: st.start("n", model=v))
for kind, value in {
    "a string": "x",
    "a list": [1],
    "an int": 5,
    "bytes": b"{}",
    "a dict with an int key": {1: "a"},
    "a dict with NaN": {"a": float("nan")},
    "a dict with a huge int": {"a": HUGE},
    "a dict with bytes": {"a": b"x"},
}.items():
    add(f"start: metadata is {kind}", lambda st, a, v=value: st.start("n", metadata=v))

# -- messages --------------------------------------------------------------------------------
for kind, value in NOT_MESSAGES.items():
    add(f"append: messages are {kind}", lambda st, a, v=value: st.append(S, v), MESSAGE)
    add(f"sync: messages are {kind}", lambda st, a, v=value: st.sync(S, v), MESSAGE)

# -- versions ----------------------------------------------------------------------------------
for kind, value in {**NOT_INT, "zero": 0, "negative": -1}.items():
    add(f"active_at: version is {kind}", lambda st, a, v=value: st.active_at(S, v))
for kind, value in {"2**63": BIG, "2**70": HUGE}.items():
    add(
        f"active_at: version is {kind}",
        lambda st, a, v=value: st.active_at(S, v),
        REFUSE_OR_ANSWER,
    )

# -- explain -----------------------------------------------------------------------------------
for kind, value in NOT_TEXT.items():
    add(f"explain: message id is {kind}", lambda st, a, v=value: st.explain(S, v))

# -- compact -----------------------------------------------------------------------------------
for kind, value in NOT_CALLABLE.items():
    add(f"compact: summarize is {kind}", lambda st, a, v=value: st.compact(S, v))
for kind, value in NOT_TEXT.items():
    if value is not None:
        add(
            f"compact: reason is {kind}",
            lambda st, a, v=value: st.compact(S, lambda m: m, reason=v),
        )

# -- commit_compaction / fail_compaction ---------------------------------------------------
NOT_ATTEMPTS = {
    "None": None,
    "a string": "cmp_0",
    "an int": 5,
    "a dict": {"id": "cmp_0", "session_id": S, "version": 1, "messages": []},
}
for kind, value in NOT_ATTEMPTS.items():
    add(
        f"commit_compaction: attempt is {kind}",
        lambda st, a, v=value: st.commit_compaction(v, []),
    )
    add(f"fail_compaction: attempt is {kind}", lambda st, a, v=value: st.fail_compaction(v, "e"))
for kind, value in {"None": None, "an int": 5, "a string": "summary", "bytes": b"[]"}.items():
    add(
        f"commit_compaction: replacement is {kind}",
        lambda st, a, v=value: st.commit_compaction(a, v),
        REFUSE_OR_FAIL,
    )
for kind, value in NOT_TEXT.items():
    if value is not None:
        add(
            f"commit_compaction: reason is {kind}",
            lambda st, a, v=value: st.commit_compaction(a, list(a.messages), reason=v),
        )
        add(
            f"fail_compaction: reason is {kind}",
            lambda st, a, v=value: st.fail_compaction(a, "e", reason=v),
        )
for side in ("tokens_before", "tokens_after"):
    for kind, value in {
        "a string": "5",
        "a float": 1.5,
        "a bool": True,
        "negative": -1,
        "2**70": HUGE,
        "a list": [5],
    }.items():
        add(
            f"commit_compaction: {side} is {kind}",
            lambda st, a, v=value, k=side: st.commit_compaction(a, list(a.messages), **{k: v}),
        )
    add(  # past a signed 64-bit column: refused, or kept as given
        f"commit_compaction: {side} is 2**63",
        lambda st, a, k=side: st.commit_compaction(a, list(a.messages), **{k: BIG}),
        REFUSE_OR_ACCEPT,
        _audited(side, BIG),
    )
for kind, value in {
    "None": None,
    "an int": 5,
    "a list": ["e"],
    "a dict": {"e": 1},
    "bytes": b"e",
}.items():
    add(f"fail_compaction: error is {kind}", lambda st, a, v=value: st.fail_compaction(a, v))
for kind, value in {
    "None": None,
    "an int": 5,
    "empty": "",
    "not snake case": "Bad Code",
    "a list": ["x"],
}.items():
    add(
        f"fail_compaction: failure is {kind}",
        lambda st, a, v=value: st.fail_compaction(a, "e", failure=v),
    )
for kind, value in {"an int": 5, "a string": "summary", "a dict": {"role": "user"}}.items():
    add(
        f"fail_compaction: replacement is {kind}",
        lambda st, a, v=value: st.fail_compaction(a, "e", replacement=v),
    )

# -- rewind ------------------------------------------------------------------------------------
for kind, value in {**NOT_INT, "zero": 0, "negative": -1, "2**63": BIG, "2**70": HUGE}.items():
    add(f"rewind: count is {kind}", lambda st, a, v=value: st.rewind(S, count=v))
for kind, value in NOT_TEXT.items():
    add(f"rewind: to is {kind}", lambda st, a, v=value: st.rewind(S, to=v))
    if value is not None:
        add(f"rewind: reason is {kind}", lambda st, a, v=value: st.rewind(S, count=1, reason=v))
add("rewind: both count and to", lambda st, a: st.rewind(S, count=1, to="m4"))

# -- search ------------------------------------------------------------------------------------
for kind, value in NOT_TEXT.items():
    add(f"search: query is {kind}", lambda st, a, v=value: st.search(v))
    if value is not None:
        add(f"search: role is {kind}", lambda st, a, v=value: st.search("hello", role=v))
for kind, value in {"None": None, "a string": "yes", "a list": [], "a dict": {}}.items():
    add(f"search: active_only is {kind}", lambda st, a, v=value: st.search("hello", active_only=v))
for kind, value in {**NOT_INT, "zero": 0, "negative": -1}.items():
    add(f"search: limit is {kind}", lambda st, a, v=value: st.search("hello", limit=v))
for kind, value in {"2**63": BIG, "2**70": HUGE}.items():
    add(
        f"search: limit is {kind}",
        lambda st, a, v=value: st.search("hello", limit=v),
        REFUSE_OR_ANSWER,
    )

# -- projections -----------------------------------------------------------------------------
for kind, value in {"an int": 5, "a string": "progress", "a list": []}.items():
    add(
        f"rebuild_projections: progress is {kind}", lambda st, a, v=value: st.rebuild_projections(v)
    )
    add(
        f"catch_up_projections: progress is {kind}",
        lambda st, a, v=value: st.catch_up_projections(v),
    )


def _stopped() -> threading.Event:
    stop = threading.Event()
    stop.set()
    return stop


for kind, value in {"None": None, "an int": 5, "a string": "stop", "a bool": True}.items():
    add(f"follow_projections: stop is {kind}", lambda st, a, v=value: st.follow_projections(v))
for kind, value in {"an int": 5, "a string": "on_batch"}.items():
    add(
        f"follow_projections: on_batch is {kind}",
        lambda st, a, v=value: st.follow_projections(_stopped(), v),
    )


def fill(store: TranscriptStore) -> None:
    store.start(S, source="test", metadata={"k": "v"})
    store.append(
        S,
        [
            {"id": "m1", "role": "user", "content": "hello there"},
            {"id": "m2", "role": "assistant", "content": "hello back"},
            {"id": "m3", "role": "user", "content": "and then"},
        ],
    )
    assert store.compact(S, lambda ms: [{"role": "system", "content": "sum"}, ms[-1]]).committed
    store.append(S, [{"id": "m4", "role": "user", "content": "after"}])


def _run_bounded(call: Callable[[], object], seconds: float = 30) -> object:
    """Run `call` in a thread, so that an argument that is not refused cannot hang the test
    (a `stop` that is never set): the outcome, or the exception it raised."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(("returned", call()))
        except BaseException as error:  # noqa: BLE001 - reported to the test
            outcome.append(("raised", error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"the call did not return within {seconds} s"
    return outcome[0]


@pytest.mark.parametrize("case", CASES)
def test_a_public_method_refuses_an_argument_of_the_wrong_type_or_range_with_a_typed_error(
    store: TranscriptStore, store_url: str, case: str
) -> None:
    fill(store)
    attempt = store.begin_compaction(S)
    before = snapshot(store, store_url)
    spec = CASES[case]
    how, outcome = _run_bounded(lambda: spec.call(store, attempt))  # type: ignore[misc]
    if how == "raised":
        assert isinstance(outcome, TranscriptError), (
            f"{type(outcome).__module__}.{type(outcome).__name__}: {outcome}"
        )
        if spec.expect == MESSAGE:
            assert isinstance(outcome, InvalidMessageError), repr(outcome)
        assert snapshot(store, store_url) == before
    elif spec.expect == REFUSE_OR_ANSWER:
        assert snapshot(store, store_url) == before
    elif spec.expect == REFUSE_OR_ACCEPT:
        if spec.check is not None:
            spec.check(store)
    elif spec.expect == REFUSE_OR_FAIL:
        assert isinstance(outcome, CompactionResult), outcome
        assert (outcome.committed, outcome.failure) == (False, "invalid_replacement"), outcome
        after = snapshot(store, store_url)
        assert after["seen"][S]["active"] == before["seen"][S]["active"]
        assert after["seen"][S]["events"][:-1] == before["seen"][S]["events"]
        assert after["seen"][S]["events"][-1]["type"] == "CompactionFailed"
    else:
        pytest.fail(f"accepted: returned {outcome!r}")
    report = store.verify_projections()
    assert report.ok, report.problems


# A lock timeout that is infinite or huge may mean "wait for ever": refused or accepted.
OPEN_MAY_ACCEPT = {"lock_timeout is infinite", "lock_timeout is huge"}
OPEN_CASES: dict[str, dict[str, Any]] = {
    "lock_timeout is a string": {"lock_timeout": "soon"},
    "lock_timeout is negative": {"lock_timeout": -1},
    "lock_timeout is NaN": {"lock_timeout": float("nan")},
    "lock_timeout is infinite": {"lock_timeout": float("inf")},
    "lock_timeout is a bool": {"lock_timeout": True},
    "lock_timeout is huge": {"lock_timeout": HUGE},
    "lock_timeout is a list": {"lock_timeout": [1]},
    "cipher_key is an int": {"cipher_key": 5},
    "cipher_key is bytes": {"cipher_key": b"0" * 32},
    "cipher_key is a list": {"cipher_key": ["k"]},
    "projector is an int": {"projector": 5},
    "projector is not a Projector": {"projector": dict},
}


@pytest.mark.parametrize("case", OPEN_CASES)
def test_open_refuses_a_setting_of_the_wrong_type_or_range_with_a_typed_error(
    store_url: str, case: str
) -> None:
    how, outcome = _run_bounded(lambda: TranscriptStore.open(store_url, **OPEN_CASES[case]))  # type: ignore[misc]
    if how == "returned":
        try:
            if case in OPEN_MAY_ACCEPT:  # then it works as a store
                outcome.start("s")  # type: ignore[attr-defined]
                outcome.append("s", [{"role": "user", "content": "x"}])  # type: ignore[attr-defined]
                assert len(outcome.active("s")) == 1  # type: ignore[attr-defined]
                return
        finally:
            outcome.close()  # type: ignore[attr-defined]
        pytest.fail(f"accepted: {OPEN_CASES[case]}")
    assert isinstance(outcome, TranscriptError), (
        f"{type(outcome).__module__}.{type(outcome).__name__}: {outcome}"
    )


@pytest.mark.parametrize("url", [5, b"memory://", ["memory://"], {"url": 1}], ids=repr)
def test_open_refuses_a_url_that_is_not_text_with_a_typed_error(url: object) -> None:
    how, outcome = _run_bounded(lambda: TranscriptStore.open(url))  # type: ignore[arg-type,misc]
    if how == "returned":
        outcome.close()  # type: ignore[attr-defined]
        pytest.fail(f"accepted: {url!r}")
    assert isinstance(outcome, TranscriptError), (
        f"{type(outcome).__module__}.{type(outcome).__name__}: {outcome}"
    )
