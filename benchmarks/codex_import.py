"""Codex import benchmark: what `import_codex` adds to the writes it makes.

    python benchmarks/codex_import.py            # ~30 s; prints a table
    python benchmarks/codex_import.py --check    # exit 1 if the target is missed
    python benchmarks/codex_import.py --help

A rollout shaped as Codex writes one (tests/data/codex): `--turns` (2,000) turns of a user
message, a tool call and its output, an answer and Codex's bookkeeping lines (task events, a
turn context, a token count), with a compaction every `--every` (250) turns keeping the last
20 user messages and adding a summary. Measured in interleaved rounds, each into a fresh
SQLite file store:

  `import_codex(store, rollout)` vs the same writes made straight through the store's API
  (start, appends of 500, each compaction begun and committed), planned beforehand. Target
  <= 1.5: reading, parsing, planning and fencing the import cost at most half of the writes.

Info: importing the same rollout again (unchanged: every stored event compared, nothing
written), vs the first import.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness

from transcripts import TranscriptStore
from transcripts.adapters.importers.codex import import_codex
from transcripts.adapters.importers.codex.plan import plan_rollout
from transcripts.adapters.importers.codex.rollout import read_rollout
from transcripts.adapters.importers.codex.steps import Append, SessionPlan

TARGET = 1.5
SESSION = "01a24a49-0000-7000-8000-00000000c0de"
IMPORT, WRITES, AGAIN = "import_codex", "the same writes, by the API", "import again (unchanged)"


def write_rollout(path: Path, turns: int, every: int, chars: int) -> int:
    """A rollout of `turns` turns, a compaction every `every`; its number of lines."""
    meta = {"id": SESSION, "cwd": "/work", "cli_version": "0.171.0", "originator": "codex_exec",
            "base_instructions": {"text": "instructions"}}  # fmt: skip
    records: list[dict[str, Any]] = [{"type": "session_meta", "payload": meta}]

    def add(kind: str, payload: dict[str, Any]) -> None:
        records.append({"timestamp": "2026-12-06T07:00:00.000Z", "ordinal": len(records),
                        "type": kind, "payload": payload})  # fmt: skip

    text = harness.make_message(chars, 0)["content"]
    users: list[dict[str, Any]] = []
    for turn in range(turns):
        user = {"type": "message", "id": f"msg_u{turn}", "role": "user",
                "content": [{"type": "input_text", "text": f"{turn} {text}"}]}  # fmt: skip
        users.append(user)
        add("event_msg", {"type": "task_started", "turn_id": f"turn-{turn}"})
        add("turn_context", {"turn_id": f"turn-{turn}", "model": "gpt-test"})
        add("response_item", user)
        add("response_item", {"type": "function_call", "id": f"fc_{turn}", "call_id": f"c{turn}",
                              "name": "exec_command", "arguments": '{"cmd": "ls"}'})  # fmt: skip
        add("response_item", {"type": "function_call_output", "id": f"fco_{turn}",
                              "call_id": f"c{turn}", "output": text})  # fmt: skip
        add("response_item", {"type": "message", "id": f"msg_a{turn}", "role": "assistant",
                              "content": [{"type": "output_text", "text": text}]})  # fmt: skip
        usage = {"total_tokens": 1000 + turn}
        info = {"last_token_usage": usage, "total_token_usage": usage, "model_context_window": 1e6}
        add("event_msg", {"type": "token_count", "info": info})
        add("event_msg", {"type": "task_complete", "turn_id": f"turn-{turn}"})
        if turn % every == every - 1:
            users = users[-20:]
            summary = {"type": "message", "id": f"msg_s{turn}", "role": "user",
                       "content": [{"type": "input_text", "text": f"Summary {turn}"}]}  # fmt: skip
            add("compacted", {"message": "", "replacement_history": [*users, summary]})
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return len(records)


def write_plan(store: TranscriptStore, plan: SessionPlan) -> None:
    """The writes the import makes, straight through the store's API."""
    store.start(plan.session_id, source="codex", model=plan.model, metadata=plan.metadata)
    batch: list[dict[str, Any]] = []
    for step in [*plan.steps, None]:
        if isinstance(step, Append):
            batch.append(step.message)
            if len(batch) < 500:
                continue
        if batch:
            store.append(plan.session_id, batch)
            batch = []
        if step is not None and not isinstance(step, Append):
            attempt = store.begin_compaction(plan.session_id)
            stored = {message["id"]: message for message in attempt.messages}
            replacement = [stored[m] if isinstance(m, str) else m for m in step.replacement]
            store.commit_compaction(attempt, replacement, reason=step.reason)


def main(argv: list[str] | None = None) -> int:
    """Parse the options; run in a scratch directory."""
    parser = harness.new_parser(__doc__, epilog=f"Target: <= {TARGET}.")
    harness.add_round_options(parser, rounds=5, batch=1, calls="imports")
    harness.add_count(parser, "--turns", 2000, "turns in the rollout")
    harness.add_count(parser, "--every", 250, "turns between compactions")
    harness.add_chars_option(parser, 400)
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    harness.add_check_option(parser)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.batch < 1 or args.turns < 1 or args.every < 1:
        parser.error("need --rounds, --batch, --turns and --every >= 1")
    return harness.run_in_scratch_directory(args, run)


def run(args: argparse.Namespace, directory: Path) -> int:
    """Write the rollout, time the variants in interleaved rounds, print the tables."""
    rng = random.Random(args.seed)
    rollout = directory / f"rollout-2026-12-06T07-00-00-{SESSION}.jsonl"
    lines = write_rollout(rollout, args.turns, args.every, args.chars)
    plan = plan_rollout(read_rollout(rollout))
    stores = iter(range(10**9))
    opened: list[TranscriptStore] = []

    def fresh() -> TranscriptStore:
        store = TranscriptStore.open(f"sqlite:///{directory / f'store-{next(stores)}.db'}")
        opened.append(store)
        return store

    def imported() -> TranscriptStore:
        store = fresh()
        import_codex(store, rollout)
        return store

    variants = {
        IMPORT: on(fresh, lambda store: import_codex(store, rollout)),
        WRITES: on(fresh, lambda store: write_plan(store, plan)),
        AGAIN: on(imported, lambda store: import_codex(store, rollout)),
    }
    started = time.perf_counter()
    samples = harness.run_rounds(variants, args.rounds, args.batch, rng, between=_close(opened))
    elapsed = time.perf_counter() - started
    _close(opened)()

    print(harness.title("codex_import", ("eventsourcing",)))
    harness.print_directory(
        directory,
        f"a rollout of {lines:,} lines ({rollout.stat().st_size / 1e6:.1f} MB): {args.turns:,} "
        f"turns, {len(plan.compactions)} compactions, {plan.messages:,} messages stored; "
        f"{args.rounds} rounds of {args.batch} imports per variant in {elapsed:.0f} s",
    )
    table = harness.TimingTable(44, 17)
    table.header("variant", "median µs/import")
    table.rows(samples)
    print()
    verdicts = harness.Verdicts()
    ratios = harness.round_ratios(samples, IMPORT, WRITES)
    verdicts.ratio("import_codex vs the same writes", ratios, TARGET, at_most=True)
    ratios = harness.round_ratios(samples, AGAIN, IMPORT)
    verdicts.ratio("import again (unchanged) vs import", ratios, None, at_most=True)
    verdicts.warn_if_noisy("run again, or with more --rounds")
    return verdicts.exit_code(args.check)


def on(
    make: Callable[[], TranscriptStore], act: Callable[[TranscriptStore], object]
) -> harness.Setup:
    """A setup that makes a store (untimed) and times `act` on it."""

    def prepare() -> harness.Call:
        store = make()
        return lambda: act(store)

    return prepare


def _close(opened: list[TranscriptStore]) -> Any:
    """Close the stores the last variant opened (untimed, between variants)."""

    def close() -> None:
        while opened:
            opened.pop().close()

    return close


if __name__ == "__main__":
    raise SystemExit(main())
