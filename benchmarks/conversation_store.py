"""pydantic-ai benchmark: a turn saved and a conversation loaded through
`TranscriptConversationStore`, against the store's own calls doing the same writes and reads.

    python benchmarks/conversation_store.py            # ~1 min; prints a table
    python benchmarks/conversation_store.py --help

One SQLite file store holds a conversation of `--history` (200) entries, saved through the
integration, and one that grows by a turn a save; measured in interleaved rounds, each ratio
the median of per-round ratios of per-round medians (info: no target):

  `save(conversation)` of a turn of 4 new messages (a request, a tool call, its result, an
  answer), against `store.append` of the same 4 messages as the integration stores them
  (`write`, without the record): what pydantic-ai's save, the record (a `StateChanged`) and
  the fence on the session's version add.

  `load(conversation_id)` of the whole conversation, against `store.history()` of its session
  (the view read it is built on): what walking the history and pydantic-ai's validation of
  each message add.

Info row: the first save to the conversation of `--history` entries after the store is
reopened (its events are replayed once: a state change needs the whole transcript).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from pathlib import Path
from typing import Any

import harness
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationEntry
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from transcripts import Append, TranscriptStore
from transcripts.integrations.pydantic_ai import TranscriptConversationStore
from transcripts.integrations.pydantic_ai.entries import stored_message

CHAT = "chat"


def turn(number: int, chars: int) -> list[ModelMessage]:
    """A turn of 4 messages: a prompt, a tool call, its result and an answer."""
    text = harness.make_message(chars, number)["content"]
    call = f"call-{number}"
    return [
        ModelRequest(parts=[UserPromptPart(text)]),
        ModelResponse(parts=[ToolCallPart("lookup", {"q": text[:40]}, call)]),
        ModelRequest(parts=[ToolReturnPart("lookup", text, call)]),
        ModelResponse(parts=[TextPart(text)]),
    ]


class Turns:
    """Saves of one new turn after another, on a conversation carried from save to save."""

    def __init__(
        self, store: TranscriptConversationStore, loop: asyncio.AbstractEventLoop, name: str
    ) -> None:
        self.store, self.loop = store, loop
        self.conversation = loop.run_until_complete(store.load(name)) or Conversation(
            conversation_id=name
        )
        self.number = 0

    def save(self, chars: int) -> None:
        self.number += 1
        self.conversation.messages.extend(turn(self.number, chars))
        self.loop.run_until_complete(self.store.save(self.conversation))


def appends(store: TranscriptStore, chars: int) -> harness.Call:
    """`store.append` of a turn's 4 messages, as the integration stores them."""
    counter = iter(range(10**9))

    def append() -> None:
        number, parent = next(counter), None
        messages = []
        for message in turn(number, chars):
            entry = ConversationEntry(parent_id=parent, message=message)
            messages.append(stored_message(entry))
            parent = entry.id
        store.write("plain", [Append(messages)])

    return append


def main(argv: list[str] | None = None) -> int:
    parser = harness.new_parser(__doc__)
    harness.add_round_options(parser, rounds=20, batch=10, calls="calls")
    harness.add_count(parser, "--history", 200, "entries of the conversation")
    harness.add_chars_option(parser, 400)
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    args = parser.parse_args(argv)
    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    rng = random.Random(args.seed)
    url = f"sqlite:///{directory / 'store.db'}"
    loop = asyncio.new_event_loop()
    with TranscriptConversationStore(url=url) as conversations:
        store = conversations.store
        store.start("plain", source="benchmark")
        seeded = Turns(conversations, loop, CHAT)
        for _ in range(args.history // 4):
            seeded.save(args.chars)
        history = len(seeded.conversation.messages)
        turns = Turns(conversations, loop, "live")  # saved to: the loaded one stays as seeded
        save, append = "save() of a 4-message turn", "store.write(Append) of the same"
        load, read = f"load() of {history} entries", "store.history() of its session"
        variants: dict[str, Any] = {
            save: harness.same_call(lambda: turns.save(args.chars)),
            append: harness.same_call(appends(store, args.chars)),
            load: harness.same_call(lambda: loop.run_until_complete(conversations.load(CHAT))),
            read: harness.same_call(lambda: store.history(CHAT)),
        }
        harness.warm_up(variants, 2)
        samples = harness.run_rounds(variants, args.rounds, args.batch, rng)
    with TranscriptConversationStore(url=url) as reopened:
        cold = Turns(reopened, loop, CHAT)
        started = time.perf_counter()
        cold.save(args.chars)
        first = time.perf_counter() - started
    loop.close()

    print(harness.title("pydantic-ai", ("eventsourcing", "pydantic-ai-slim")))
    harness.print_directory(
        directory, f"{args.rounds} rounds of {args.batch} calls per variant, {args.chars} chars"
    )
    table = harness.TimingTable(44, 17)
    table.header("variant", "median µs/call")
    table.rows(samples)
    table.row("first save after reopening (info)", [first], p90=False)
    print()
    verdicts = harness.Verdicts()
    for label, over, under in (
        ("save() / store.write(Append)", save, append),
        ("load() / store.history()", load, read),
    ):
        verdicts.ratio(label, harness.round_ratios(samples, over, under), None, at_most=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
