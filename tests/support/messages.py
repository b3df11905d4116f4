"""Messages for tests: plain turns, tool calls and their results, summaries, the trip
conversation, and the parts of messages the tests compare."""

from __future__ import annotations

# A planning conversation with a tool call and its result (m4, m5), ids given.
TRIP = [
    {"id": "m1", "role": "system", "content": "You plan trips."},
    {"id": "m2", "role": "user", "content": "Three days in Lisbon?"},
    {"id": "m3", "role": "assistant", "content": "Alfama, Belém, Sintra."},
    {
        "id": "m4",
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "forecast", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"id": "m5", "role": "tool", "tool_call_id": "call_1", "content": "17°C, showers."},
    {"id": "m6", "role": "user", "content": "Where to eat?"},
]
TRIP_SUMMARY = {"role": "assistant", "content": "Summary: Lisbon plan; mild and showery."}


def turns(n: int, prefix: str = "turn") -> list[dict]:
    """`n` alternating user/assistant messages without ids: turns(4, prefix="q")."""
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"{prefix} {i}"} for i in range(n)]


def summary(text: str = "summary") -> dict:
    """A new system message, as a compaction adds it (no id)."""
    return {"role": "system", "content": text}


def tool_call(call_id: str, name: str = "search") -> dict:
    """An assistant message making one tool call."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        ],
    }


def tool_result(call_id: str, content: str = "sunny") -> dict:
    """The tool message answering call `call_id`."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def tool_exchange(call_id: str, content: str = "sunny", name: str = "search") -> list[dict]:
    """A tool call and its result, in order."""
    return [tool_call(call_id, name), tool_result(call_id, content)]


def ids(messages: list[dict]) -> list[str]:
    return [message["id"] for message in messages]


def without_id(message: dict) -> dict:
    """A message's content: every key but `id`."""
    return {key: value for key, value in message.items() if key != "id"}
