"""PostgreSQL benchmark: the client-server round trips of one `append`.

    python benchmarks/postgres_round_trips.py                  # ~30 s; prints a table
    python benchmarks/postgres_round_trips.py --server postgresql://postgres@127.0.0.1:5432/postgres
    python benchmarks/postgres_round_trips.py --help

Needs a PostgreSQL server where the user may create databases (`--server`, else
$TRANSCRIPTS_TEST_POSTGRES_URL, else postgresql://postgres@127.0.0.1:5432/postgres); it runs
in a fresh database, dropped afterwards.

The store talks to the server through a TCP relay on 127.0.0.1 made by this script, which
sees every byte and can delay each chunk it passes on. An append of one message to an
existing session, its transcript in the store's cache (an agent's flush after a turn), is
measured two ways, on the same store:
- turns: per connection, how many times the server began answering after the client had
  sent something; summed over the connections the append used. Statements sent together
  (psycopg's pipeline mode) and answered together are one turn. A client that sends a
  statement and goes on without waiting for its answer could be counted a turn it does
  not wait for, so this is an upper bound.
- round trips by latency: the median append with the relay delaying every chunk by
  `--delay` ms each way, minus the median without delay, over the round trip the delay
  adds: what an append would pay per round trip across a network. This is the figure the
  target is about: PostgreSQL append <= 5 round trips.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import harness

from transcripts import TranscriptStore

TARGET_ROUND_TRIPS = 5.0
SESSION = "round-trips"


@dataclass
class Relay:
    """A TCP relay to the server that counts each connection's turns and delays chunks."""

    host: str
    port: int
    delay: float = 0.0  # seconds each chunk waits, each way
    turns: int = 0  # server answers that followed client data, all connections
    listening_port: int = 0
    _loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _server: asyncio.AbstractServer | None = None

    def start(self) -> None:
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(10)

    def stop(self) -> None:
        """End every connection's tasks, then the loop."""

        async def cancelled() -> None:
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(cancelled(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0)
        )
        self.listening_port = self._server.sockets[0].getsockname()[1]
        ready.set()
        self._loop.run_forever()

    async def _serve(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        server_in, server_out = await asyncio.open_connection(self.host, self.port)
        client_spoke = [False]  # the client sent something since the server last answered

        async def pump(
            reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: bool
        ) -> None:
            queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

            async def deliver() -> None:
                while True:
                    due, chunk = await queue.get()
                    if not chunk:
                        writer.close()
                        return
                    wait = due - time.perf_counter()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    writer.write(chunk)
                    await writer.drain()

            delivering = asyncio.ensure_future(deliver())
            while True:
                chunk = await reader.read(65536)
                if up:
                    client_spoke[0] = True
                elif chunk and client_spoke[0]:
                    client_spoke[0] = False
                    self.turns += 1
                queue.put_nowait((time.perf_counter() + self.delay, chunk))
                if not chunk:
                    break
            await delivering

        await asyncio.gather(
            pump(client_in, server_out, True), pump(server_in, client_out, False),
            return_exceptions=True,
        )  # fmt: skip


@contextmanager
def relayed(url: str) -> Iterator[tuple[Relay, str]]:
    """A relay to the server of `url`, and the URL through it."""
    parts = urlsplit(url)
    relay = Relay(parts.hostname or "127.0.0.1", parts.port or 5432)
    relay.start()
    user = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    try:
        yield relay, urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{relay.listening_port}"))
    finally:
        relay.stop()


def measure(store: TranscriptStore, relay: Relay, appends: int) -> tuple[list[int], list[float]]:
    """Per append: its turns and its seconds."""
    turns, seconds = [], []
    for number in range(appends):
        before = relay.turns
        began = time.perf_counter()
        store.append(SESSION, [{"role": "user", "content": f"message {number}"}])
        seconds.append(time.perf_counter() - began)
        turns.append(relay.turns - before)
    return turns, seconds


def main(argv: list[str] | None = None) -> int:
    """Parse the options; print the header, the figures and the verdict; the exit code."""
    parser = harness.new_parser(__doc__)
    harness.add_server_option(parser)
    harness.add_count(parser, "--appends", 40, "appends measured per delay")
    parser.add_argument("--delay", type=float, default=10.0, help="ms the relay adds each way")
    harness.add_check_option(parser, f"exit 1 if an append takes > {TARGET_ROUND_TRIPS:g}")
    args = parser.parse_args(argv)

    harness.print_postgres_header("PostgreSQL round trips of one append", args.server)
    with harness.scratch_database(args.server) as url, relayed(url) as (relay, through):
        with TranscriptStore.open(through) as store:
            store.start(SESSION)
            measure(store, relay, 10)  # warm: the cache, the pool, prepared statements
            turns, quick = measure(store, relay, args.appends)
            relay.delay = args.delay / 1e3
            _, slow = measure(store, relay, args.appends)
    latency = (statistics.median(slow) - statistics.median(quick)) / (2 * relay.delay)
    print(f"one append of one message to an existing session, {args.appends} appends")
    print(f"turns (server answers after client data): median {statistics.median(turns):g}, "
          f"max {max(turns)}")  # fmt: skip
    print(f"append: {harness.micros(statistics.median(quick))} µs median undelayed, "
          f"{statistics.median(slow) * 1e3:.1f} ms with {args.delay:g} ms each way")  # fmt: skip
    verdicts = harness.Verdicts()
    verdicts.line("round trips by latency", f"{latency:.1f}", "", latency, TARGET_ROUND_TRIPS, True)
    return verdicts.exit_code(args.check)


if __name__ == "__main__":
    sys.exit(main())
