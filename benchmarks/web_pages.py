"""Web app benchmark: what a session's page costs when the session is long, as ratios.

    python benchmarks/web_pages.py              # ~2 min (building 100,000 messages); a table
    python benchmarks/web_pages.py --check      # exit 1 if a target is missed
    python benchmarks/web_pages.py --messages 20000 --rounds 5

In one SQLite store, a session of `--messages` (100,000) messages (appended 1,000 a call,
compacted every 25,000 keeping the last 100, a failed attempt, a rewind and a restore near
the end) and a session of 1,000 made alike. Measured in one run, the variants interleaved in
rounds (their order shuffled every round), each ratio the median of the per-round ratios:

  (a) GET of the long session's page (the web app in-process, through its whole ASGI stack:
      the timeline read from the audit and the rewinds, its SVG chart, the first page of 100
      events) in ms. Target: well under a second (< 0.5 s).
  (b) the same page / the same page of the session of 1,000 messages: the page reads no
      message it does not show, but two of its reads grow with the session: the rewinds,
      looked up by topic along the session's log key (`iter_events(types=...)`), and the
      compaction audit's lists of superseded ids. Info.
  (c) the same page / a plain sqlite3 program reading the same page of events: `SELECT`
      of the session's first 100 event rows by its key, each payload decoded with
      `orjson.loads`. Info: the page also reads the sessions, the audit and the rewinds,
      and renders HTML.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
from pathlib import Path

import harness
import orjson
from starlette.testclient import TestClient

from transcripts import TranscriptStore
from transcripts.adapters.web.app import create_app
from transcripts.adapters.web.links import ServerLinks

LONG, SHORT = "long", "short"
PAGE = 100  # events on a session's page (adapters/web/pages.py)


def build(store: TranscriptStore, session_id: str, messages: int) -> None:
    store.start(session_id, source="bench", model="m")
    stored = 0
    while stored < messages:
        count = min(1_000, messages - stored)
        store.append(session_id, [harness.make_message(200, stored + i) for i in range(count)])
        stored += count
        if stored % 25_000 == 0:
            store.compact(session_id, lambda m: [*m[-100:], {"role": "system", "content": "s"}])
        if stored == messages // 2:
            store.compact(session_id, _failing)
    rewound = store.rewind(session_id, count=3, reason="undo")
    store.append(session_id, rewound[:1])


def _failing(_messages: list[dict]) -> list[dict]:
    raise RuntimeError("the summarizer failed")


def plain_page(path: Path, session_id: str):
    """A plain sqlite3 read of the session's first page of events, payloads decoded."""
    from transcripts.domain.transcript import transcript_id

    key = transcript_id(session_id).hex
    connection = sqlite3.connect(path)

    def read() -> list[object]:
        rows = connection.execute(
            "SELECT originator_version, topic, state FROM stored_events WHERE originator_id = ? "
            "AND originator_version > 0 ORDER BY originator_version LIMIT ?",
            (key, PAGE),
        ).fetchall()
        return [orjson.loads(state) for _, _, state in rows]

    return read


def run(args: argparse.Namespace, directory: Path) -> int:
    path = directory / "web.db"
    url = f"sqlite:///{path}"
    print(harness.title("web pages", ["starlette", "jinja2"]))
    harness.print_directory(directory, f"one store: {args.messages:,} and 1,000 messages")
    with TranscriptStore.open(url) as store:
        build(store, LONG, args.messages)
        build(store, SHORT, 1_000)
        links = ServerLinks()
        with TestClient(create_app(store), base_url="http://127.0.0.1") as client:

            def page(session_id: str):
                def get() -> None:
                    response = client.get(links.session(session_id))
                    assert response.status_code == 200 and "data-version" in response.text

                return get

            variants = {
                f"page, {args.messages:,} messages": harness.same_call(page(LONG)),
                "page, 1,000 messages": harness.same_call(page(SHORT)),
                "plain SELECT of the page": harness.same_call(plain_page(path, LONG)),
            }
            harness.warm_up(variants, 2)
            samples = harness.run_rounds(
                variants, args.rounds, args.batch, random.Random(args.seed)
            )
    names = list(variants)
    print()
    harness.TimingTable(28, 10).header("call", "median µs")
    harness.TimingTable(28, 10).rows(samples)
    print()
    verdicts = harness.Verdicts()
    seconds = harness.flatten(samples[names[0]])
    median = sorted(seconds)[len(seconds) // 2]
    verdicts.line("(a) first page, seconds", f"{median:.3f}", "", median, 0.5, at_most=True)
    ratios = harness.round_ratios(samples, names[0], names[1])
    verdicts.ratio(f"(b) page: {args.messages:,} / 1,000 messages", ratios, None, at_most=True)
    ratios = harness.round_ratios(samples, names[0], names[2])
    verdicts.ratio("(c) page / plain SELECT of its events", ratios, None, at_most=True)
    verdicts.warn_if_noisy("run it again on a quieter machine")
    return verdicts.exit_code(args.check)


def main() -> int:
    parser = harness.new_parser(__doc__)
    harness.add_count(parser, "--messages", 100_000, "messages of the long session")
    harness.add_round_options(parser, rounds=7, batch=5, calls="page reads")
    harness.add_scratch_options(parser)
    harness.add_seed_option(parser)
    harness.add_check_option(parser, "exit 1 if a target is missed")
    return harness.run_in_scratch_directory(parser.parse_args(), run)


if __name__ == "__main__":
    raise SystemExit(main())
