"""Messages as values: what a valid message is, its id held apart from its content, the
content hash over canonical JSON, and the text every backend can store."""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from transcripts.domain.errors import InvalidMessageError
from transcripts.domain.messages import (
    MAX_DEPTH,
    MAX_MESSAGE_BYTES,
    ROLES,
    canonical_json,
    check_json,
    check_name,
    content_hash,
    new_message_id,
    new_message_ids,
    safe_text,
    split_id,
)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


# -- split_id ---------------------------------------------------------------------------------


def test_split_id_returns_the_id_and_the_content_without_it() -> None:
    message = {"id": "m1", "role": "tool", "tool_call_id": "c1", "content": [{"type": "text"}]}
    assert split_id(message) == (
        "m1",
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text"}]},
    )
    assert message["id"] == "m1"  # the given message is left as it was


def test_a_message_without_an_id_splits_into_none_and_every_key() -> None:
    assert split_id({"role": "user", "content": "hi", "name": None}) == (
        None,
        {"role": "user", "content": "hi", "name": None},
    )


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_known_role_is_a_message(role: str) -> None:
    assert split_id({"role": role})[1] == {"role": role}


@pytest.mark.parametrize(
    ("message", "says"),
    [
        (["role", "user"], "must be a JSON object, not list"),
        ("hello", "must be a JSON object, not str"),
        ({"content": "no role"}, "message role must be one of"),
        ({"role": "robot"}, "got 'robot'"),
        ({"role": ["user"]}, "got ['user']"),
        ({"id": "", "role": "user"}, "a message id must be a non-empty string"),
        ({"id": 7, "role": "user"}, "a message id must be a non-empty string: 7"),
        ({"id": "a\x00b", "role": "user"}, "message id holds a NUL character"),
        ({"role": "user", "content": float("inf")}, "message.content: inf is not a JSON number"),
    ],
    ids=[
        "a list",
        "a string",
        "no role",
        "an unknown role",
        "a role that is a list",
        "an empty id",
        "an id that is a number",
        "a NUL in the id",
        "infinity",
    ],
)
def test_split_id_refuses_what_is_not_a_message(message: object, says: str) -> None:
    with pytest.raises(InvalidMessageError) as raised:
        split_id(message)
    assert says in str(raised.value)


def test_a_message_whose_bound_is_over_the_limit_but_whose_json_is_not_is_accepted() -> None:
    text = "a" * (MAX_MESSAGE_BYTES // 6 + 10)  # bound: 6 bytes a character; really 1
    assert check_json(text, "t") > MAX_MESSAGE_BYTES
    assert split_id({"role": "user", "content": text})[1]["content"] == text


def test_a_message_over_the_limit_in_canonical_json_is_refused_naming_the_limit() -> None:
    message = {"role": "user", "content": "\x01" * (MAX_MESSAGE_BYTES // 6 + 1)}  # \u0001 each
    with pytest.raises(InvalidMessageError, match=r"over the limit of 33,554,432 bytes \(32 MiB\)"):
        split_id(message)


# -- check_json -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -(2**63), 2**64 - 1, 1.5, "", "héllo 🦜", [], {}, {"a": [1, {"b": None}]}],
)
def test_plain_json_passes_and_its_bound_is_at_least_its_canonical_size(value: object) -> None:
    assert check_json(value, "v") >= len(canonical_json(value))


def test_nesting_up_to_the_depth_limit_passes_and_one_level_deeper_is_refused() -> None:
    check_json(nested(MAX_DEPTH), "m")
    with pytest.raises(InvalidMessageError, match=f"nested deeper than {MAX_DEPTH} levels"):
        check_json(nested(MAX_DEPTH + 1), "m")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (2**64, "m: integer 18446744073709551616 does not fit in 64 bits"),
        (-(2**63) - 1, "does not fit in 64 bits"),
        (float("nan"), "m: nan is not a JSON number"),
        ({1: "x"}, "m: key 1 is not a string"),
        ({"a": {"b": (1, 2)}}, "m.a.b: a tuple is not a JSON value"),
        ([1, {"x"}], "m[1]: a set is not a JSON value"),
        ({"text": "\ud83d"}, "m.text: text holds a lone surrogate"),
        ({"\udcff": 1}, "m: text holds a lone surrogate"),
    ],
    ids=[
        "an integer over 64 bits",
        "an integer under 64 bits",
        "NaN",
        "a key that is no string",
        "a tuple",
        "a set",
        "a lone surrogate in text",
        "a lone surrogate in a key",
    ],
)
def test_check_json_refuses_what_is_not_plain_json_naming_where(value: object, says: str) -> None:
    with pytest.raises(InvalidMessageError) as raised:
        check_json(value, "m")
    assert says in str(raised.value)


# -- new_message_id ---------------------------------------------------------------------------


def test_new_message_ids_are_unique_and_sort_in_the_order_they_were_made() -> None:
    first = [new_message_id() for _ in range(1000)]
    time.sleep(0.002)
    later = new_message_id()
    assert all(re.fullmatch("msg_[0-9a-f]{32}", i) for i in [*first, later])
    assert len(set(first)) == len(first)
    assert max(first) < later


def test_message_ids_made_together_are_unique_and_sort_before_later_ones() -> None:
    together = new_message_ids(1000)
    time.sleep(0.002)
    later = new_message_ids(2)
    assert all(re.fullmatch("msg_[0-9a-f]{32}", i) for i in [*together, *later])
    assert len(set(together + later)) == len(together) + len(later)
    assert max(together) < min(later)
    assert new_message_ids(0) == []


# -- content_hash -----------------------------------------------------------------------------


def test_the_content_hash_is_the_sha256_of_sorted_compact_utf8_json() -> None:
    content = {"role": "user", "content": "héllo", "n": [1, 2.5]}
    canonical = '{"content":"héllo","n":[1,2.5],"role":"user"}'.encode()
    assert canonical_json(content) == canonical
    assert content_hash(content) == hashlib.sha256(canonical).hexdigest()


def test_the_content_hash_ignores_key_order_and_sees_every_value() -> None:
    one = {"role": "user", "content": "x", "meta": {"a": 1, "b": 2}}
    same = {"meta": {"b": 2, "a": 1}, "content": "x", "role": "user"}
    assert content_hash(one) == content_hash(same)
    assert content_hash(one) != content_hash({**one, "content": "y"})
    assert content_hash(one) != content_hash({**one, "meta": {"a": 1, "b": 2.5}})
    assert content_hash(one) != content_hash({**one, "extra": None})


def json_module_bytes(value: object) -> bytes:
    """Canonical JSON as the json module writes it: the bytes every stored hash was made of."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")


HOSTILE_TEXT = st.text(st.characters(codec="utf-8"))  # control chars, non-BMP, U+2028 …
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES | st.dictionaries(HOSTILE_TEXT, HOSTILE_TEXT))  # most messages: text values
@example({"role": "user", "content": '\x00\x1f\x7f\u2028\U0001f600"\\/', "é": ""})
@example({"b": 1e100, "a": [-0.0, 1.5e-05, 5e-324, 1e16, 2**64 - 1, -(2**63)]})
@example({"\U0001f600": "\x00\x1f\x7f\u2028", "\uffff": {"é": '\\"/'}, "z": True})
def test_canonical_json_is_byte_for_byte_what_the_json_module_writes(value: object) -> None:
    assert canonical_json(value) == json_module_bytes(value)


@pytest.mark.parametrize(
    "value", [{"x": "\ud800"}, {1: "a"}, [2**70], {"x": (1, 2)}, {"x": [float("inf")]}]
)
def test_canonical_json_of_what_is_not_plain_json_is_what_the_json_module_does(
    value: object,
) -> None:
    try:
        expected: object = json_module_bytes(value)
    except (TypeError, ValueError) as error:
        expected = type(error)
    try:
        got: object = canonical_json(value)
    except (TypeError, ValueError) as error:
        got = type(error)
    assert got == expected


def test_canonical_json_refuses_what_json_cannot_say() -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


# -- safe_text and check_name -----------------------------------------------------------------


def test_safe_text_escapes_nul_and_lone_surrogates_and_keeps_other_text() -> None:
    assert safe_text("plain é 🦜") == "plain é 🦜"
    assert safe_text("a\x00b") == "a\\x00b"
    assert safe_text("bad \udcff byte") == "bad \\udcff byte"
    assert safe_text("\udcff\x00").encode("utf-8")  # storable as UTF-8


@pytest.mark.parametrize("name", ["m1", "héllo 🦜", "'; DROP TABLE x; --", " "])
def test_check_name_takes_any_text_without_nul_or_lone_surrogates(name: str) -> None:
    check_name(name, "session id")


@pytest.mark.parametrize(
    ("name", "says"),
    [("a\x00b", "source holds a NUL character"), ("\ud800", "source: text holds a lone surrogate")],
)
def test_check_name_refuses_nul_and_lone_surrogates_naming_what(name: str, says: str) -> None:
    with pytest.raises(InvalidMessageError) as raised:
        check_name(name, "source")
    assert says in str(raised.value)
