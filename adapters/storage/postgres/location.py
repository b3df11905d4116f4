"""Where a PostgreSQL store is: `postgresql://user:password@host:port/dbname` (or `postgres://`).

The database must exist already (the store creates its tables in it). Every part but the
database name may be left out: user = the login name, no password, host = localhost,
port = 5432. Percent-encode special characters of the user and password (`p%40ss` for
`p@ss`). The password is never shown: `url` and every error show the URL without it.
"""

from __future__ import annotations

import getpass
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ....application.storage import without_password
from ....domain.errors import StorageError

URL_FORM = "postgresql://user:password@host:port/dbname"


@dataclass(frozen=True)
class PostgresLocation:
    """The parts of a PostgreSQL store's URL."""

    dbname: str
    host: str = "localhost"
    port: int = 5432
    user: str = field(default_factory=getpass.getuser)
    password: str = field(default="", repr=False)

    kind = "postgresql"
    persistent = True

    @property
    def path(self) -> Path | None:
        return None  # not a file

    @property
    def url(self) -> str:
        """The URL without the password: safe to print."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{quote(self.user, safe='')}@{host}:{self.port}/{quote(self.dbname)}"

    @property
    def identity(self) -> Hashable:
        return (self.host, self.port, self.dbname)

    def connection_kwargs(self) -> dict[str, str | int]:
        return {
            "dbname": self.dbname,
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
        }


def parse_url(url: str) -> PostgresLocation:
    """Read a `postgresql://` or `postgres://` URL; StorageError if it is malformed."""
    shown = without_password(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise StorageError(f"invalid PostgreSQL URL {shown!r}: {error}") from None
    if parts.query or parts.fragment:
        raise StorageError(
            f"invalid PostgreSQL URL {shown!r}: parameters (?…) are not supported; use {URL_FORM}"
        )
    dbname = unquote(parts.path.removeprefix("/"))
    if not dbname or "/" in dbname:
        raise StorageError(f"no database name in URL {shown!r}: use {URL_FORM}")
    defaults = PostgresLocation(dbname)
    return PostgresLocation(
        dbname=dbname,
        host=parts.hostname or defaults.host,
        port=port or defaults.port,
        user=unquote(parts.username) if parts.username else defaults.user,
        password=unquote(parts.password) if parts.password else "",
    )
