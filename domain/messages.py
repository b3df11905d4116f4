"""Chat messages as values: validation, identity and content hashing.

A message is a JSON object with a `role`. Every other key is kept exactly as given, so
messages round-trip whatever the provider's format (tool calls, reasoning, parts lists).
Its identity is the `id` key, held apart from its content: the content hash covers every
key but `id`, in canonical JSON, so two messages are "the same" exactly when they would
serialise the same.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring
from secrets import token_hex
from time import time_ns
from typing import Any, TypeVar

from .errors import InvalidMessageError

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

Message = dict[str, Any]
T = TypeVar("T")

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""The largest message stored: its canonical JSON in UTF-8 (with its id, if given), in bytes."""
MAX_DEPTH = 100
"""How deep a message (or session metadata) may nest objects and lists."""
MAX_ID_LENGTH = 1024
"""The longest session id, message id, source or model name, in characters (any text)."""

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


def new_message_id() -> str:
    """`msg_` and 32 hex digits: the time in milliseconds, then 80 random bits. Ids made
    together sort together, so that indexes keyed by them grow at one end, a few pages a
    write, instead of taking a new id into a random page of thousands."""
    return new_message_ids(1)[0]


def new_message_ids(count: int) -> list[str]:
    """`count` new message ids (`new_message_id`), made with one reading of the clock and one
    draw of random bytes."""
    stamp, bits = f"msg_{time_ns() // 1_000_000:012x}", token_hex(10 * count)
    return [stamp + bits[at : at + 20] for at in range(0, 20 * count, 20)]


def split_id(message: object) -> tuple[str | None, Message]:
    """Validate a message and return its id (None when absent) and its content without it."""
    if type(message) is not dict and not isinstance(message, Mapping):  # (an ABC: slower)
        raise InvalidMessageError(f"a message must be a JSON object, not {type(message).__name__}")
    content = dict(message)
    message_id = content.pop("id", None)
    if message_id is not None:
        if not isinstance(message_id, str) or not message_id:
            raise InvalidMessageError(f"a message id must be a non-empty string: {message_id!r}")
        check_name(message_id, "message id")
    role = content.get("role")
    if not isinstance(role, str) or role not in ROLES:  # a list or dict is unhashable
        raise InvalidMessageError(
            f"message role must be one of {', '.join(sorted(ROLES))}: got {role!r}"
        )
    content, size = plain_json(content, "message")
    size += 0 if message_id is None else 6 * len(message_id) + 8
    if size > MAX_MESSAGE_BYTES:  # an upper bound: serialise only when it may be too big
        _check_size(message_id, content)
    return message_id, content


def _check_size(message_id: str | None, content: Message) -> None:
    message = content if message_id is None else with_id(message_id, content)
    size = len(canonical_json(message))
    if size > MAX_MESSAGE_BYTES:
        raise InvalidMessageError(
            f"message is {size:,} bytes of canonical JSON, over the limit of "
            f"{MAX_MESSAGE_BYTES:,} bytes (32 MiB)"
        )


def as_message_list(messages: object) -> list[object]:
    """The messages of a call as a list; a lone message or a string is an error."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidMessageError("messages must be given as a list of message objects")
    return list(messages)


def content_hash(content: Message) -> str:
    """SHA-256 of the canonical JSON of a message's content (every key but `id`)."""
    return hashlib.sha256(canonical_json(content)).hexdigest()


def canonical_json(value: object) -> bytes:
    """Canonical JSON in UTF-8: sorted keys, no spaces, text as is (not escaped to ASCII).

    An object of text values (most messages) is written here as `json` writes it, with its
    own string encoder, several times faster than the whole encoder for so small an object.
    """
    if type(value) is dict and all(type(item) is str for item in value.values()):
        try:
            pairs = [f"{_text(key)}:{_text(item)}" for key, item in sorted(value.items())]
        except TypeError:  # a key that is not text: the encoder says how it goes
            pass
        else:
            return ("{" + ",".join(pairs) + "}").encode("utf-8")
    return _CANONICAL.encode(value).encode("utf-8")


_text = encode_basestring  # a JSON string, not escaped to ASCII: what `_CANONICAL` writes
_CANONICAL = json.JSONEncoder(  # made once: `json.dumps` would make one a call
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def with_id(message_id: str, content: Mapping[str, Any]) -> Message:
    return {"id": message_id, **content}


def check_json(value: object, path: str, depth: int = 0) -> int:
    """Raise InvalidMessageError unless `value` is plain JSON; return a bound of its size.

    Plain JSON: finite numbers, integers within 64 bits, string keys, UTF-8 text, objects and
    lists nested at most `MAX_DEPTH` deep. The bound is at least the size in bytes of the
    value's canonical JSON (a character takes at most 6 bytes: `\\u001f`).
    """
    kind = type(value)
    if value is None or kind is bool:
        return 5
    if kind is str:
        _check_text(value, path)
        return 6 * len(value) + 2
    if kind is int:
        if not _INT_MIN <= value <= _INT_MAX:
            raise InvalidMessageError(f"{path}: integer {value} does not fit in 64 bits")
        return 20
    if kind is float:
        if not math.isfinite(value):
            raise InvalidMessageError(f"{path}: {value} is not a JSON number")
        return 24
    if kind is not dict and kind is not list:
        if isinstance(value, _JSON_TYPES):
            raise _Subclassed
        raise InvalidMessageError(f"{path}: a {kind.__name__} is not a JSON value")
    if depth >= MAX_DEPTH:
        raise InvalidMessageError(f"{path}: nested deeper than {MAX_DEPTH} levels")
    size = 2
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                if isinstance(key, str):
                    raise _Subclassed
                raise InvalidMessageError(f"{path}: key {key!r} is not a string")
            _check_text(key, path)
            if type(item) is str:  # as `check_json(item, …)`, without making its path
                _check_text(item, path, key)
                size += 6 * (len(key) + len(item)) + 6
            else:
                size += 6 * len(key) + 4 + check_json(item, f"{path}.{key}", depth + 1)
    else:
        for index, item in enumerate(value):
            size += 1 + check_json(item, f"{path}[{index}]", depth + 1)
    return size


_JSON_TYPES = (str, int, float, dict, list)
# The plain value of a subclass's instance, whatever its own __str__, __int__, __float__.
_PLAIN = ((str, str.__str__), (int, int.__int__), (float, float.__float__))


class _Subclassed(Exception):
    """A value of a subclass of a JSON type (a numpy.float64, an IntEnum): `plain_json`
    stores its plain value."""


def plain_json(value: T, path: str) -> tuple[T, int]:
    """`value` checked as `check_json` does, and a bound of its size; where it holds values
    of subclasses of JSON types (numbers, text, objects, lists, keys), a copy of it holding
    their plain values instead: what is stored, and read back."""
    try:
        return value, check_json(value, path)
    except _Subclassed:
        plain = _plain(value, 0)
        return plain, check_json(plain, path)


def _plain(value: Any, depth: int) -> Any:
    """`value` with its subclassed JSON values made plain (down to `MAX_DEPTH`, past which
    `check_json` refuses it anyway)."""
    if value is None or isinstance(value, bool) or depth > MAX_DEPTH:
        return value
    for base, plain in _PLAIN:
        if isinstance(value, base):
            return plain(value)
    if isinstance(value, dict):
        return {_plain(key, 0): _plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, depth + 1) for item in value]
    return value


def safe_text(text: str) -> str:
    """Text that can be stored: lone surrogates (undecodable bytes) and NUL become escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def check_name(name: str, what: str) -> None:
    """Raise InvalidMessageError unless `name` (an id, a source) is text every backend can
    store and index as it is: valid UTF-8 without NUL (PostgreSQL text cannot hold NUL), at
    most `MAX_ID_LENGTH` characters."""
    _check_text(name, what)
    if "\x00" in name:
        raise InvalidMessageError(f"{what} holds a NUL character: {name!r}")
    if len(name) > MAX_ID_LENGTH:
        raise InvalidMessageError(
            f"{what} is {len(name):,} characters long, over the limit of {MAX_ID_LENGTH:,}"
        )


def _check_text(text: str, path: str, key: str | None = None) -> None:
    """`key`: the text is the value of that key of the object at `path`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        where = path if key is None else f"{path}.{key}"
        raise InvalidMessageError(f"{where}: text holds a lone surrogate") from None


def calls_made(content: Message) -> list[str]:
    """Ids of the tool calls an assistant message makes (OpenAI `tool_calls` form)."""
    if content.get("role") != "assistant" or not isinstance(content.get("tool_calls"), list):
        return []
    return [
        call["id"]
        for call in content["tool_calls"]
        if isinstance(call, dict) and isinstance(call.get("id"), str)
    ]


def call_answered(content: Message) -> str | None:
    """The tool call id a tool message answers, if any."""
    call_id = content.get("tool_call_id")
    return call_id if content.get("role") == "tool" and isinstance(call_id, str) else None
