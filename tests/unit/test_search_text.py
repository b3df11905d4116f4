"""The text a message is found by: its content, tool calls and reasoning, NUL made a space."""

from __future__ import annotations

from transcripts.projections.search_text import search_text


def test_a_plain_message_is_found_by_its_content_with_nul_as_a_space() -> None:
    assert search_text({"role": "user", "content": "foxes\x00jump"}) == "foxes jump"


def test_tool_calls_and_reasoning_add_their_words_to_a_text_content() -> None:
    message = {
        "role": "assistant",
        "content": "looking",
        "tool_calls": [{"function": {"name": "lookup", "arguments": '{"q": "otter"}'}}],
        "reasoning": "first check",
    }

    assert search_text(message) == 'looking lookup {"q": "otter"} first check'


def test_parts_of_a_content_list_give_their_text() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "a"}, "b", {"image": 1}]}

    assert search_text(message) == "a b"


def test_a_message_without_text_is_indexed_with_an_empty_text() -> None:
    assert search_text({"role": "tool", "content": None, "tool_calls": None}) == ""
