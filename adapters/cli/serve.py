"""`transcripts serve`: the web app over a store (the `web` extra: Starlette, uvicorn,
Jinja2)."""

from __future__ import annotations

import click

from .support import StoreOpener

WEB_EXTRA = "install the web extra: pip install 'transcript-store[web]'"


@click.command()
@click.option(
    "--db",
    "url",
    metavar="URL",
    help="The store to serve (default: the global --db, else $TRANSCRIPTS_URL, else the "
    "default file). It must exist: serve never creates one.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but a loopback address lets other machines read "
    "every transcript in the store (there is no login).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the app in a web browser.")
@click.pass_obj
def serve(opener: StoreOpener, url: str | None, host: str, port: int, open_browser: bool) -> None:
    """Browse a store in a web browser: its sessions, each session's timeline (compactions
    committed and failed, rewinds, restores), a compaction before and after, and the
    context replayed at any version. Read-only: it writes nothing.

    Example: transcripts --db sqlite:///work.db serve --open
    """
    try:
        from ..web import serve as web
    except ImportError as error:
        raise click.ClickException(f"serve needs {error.name}: {WEB_EXTRA}") from None
    store_url = url or opener.url
    with StoreOpener(store_url, opener.durability).open() as store:
        sock = web.listening_socket(host, port)
        if not web.is_loopback(host):
            click.echo(
                f"Warning: listening on {host}, not on 127.0.0.1: anyone who can reach this "
                "machine can read every transcript in the store (there is no login).",
                err=True,
            )

        def ready(address: str) -> None:
            click.echo(f"Serving {store.config.url} (read-only) at {address} — Ctrl-C to stop.")

        web.serve(store, sock, open_browser=open_browser, on_ready=ready)
