"""Encryption at rest of the views' content columns, with the log's own cipher.

With a cipher key the library encrypts every stored event (AES-GCM, `cryptography`). The
views hold the same content, so they encrypt it too: the `message`, `metadata`, `state`,
`reason` and `error` columns hold ciphertext — as a BLOB where the database lets a column hold
any type (SQLite), else as base64 text (PostgreSQL; a JSON string in its `json` columns).
Ids, roles, counts, versions and times stay readable: they are what the audit, the ordering
and the indexes need, and carry no message content.

A store is encrypted, or not, from its creation: a `store_settings` row records which, with
a known text sealed by the key, so that opening it with no key, or another one, fails at
once (`EncryptionKeyError`) instead of reading garbage.
"""

from __future__ import annotations

import binascii
from base64 import b64decode, b64encode
from typing import Any

import orjson
from eventsourcing.persistence import Cipher

from ...config import CIPHER_KEY_VARIABLE
from ...domain.errors import EncryptionKeyError

SETTINGS_TABLE = "store_settings"
ENCRYPTION_SETTING = "encryption"
NOT_ENCRYPTED = "none"
_KEY_CHECK = "transcript-store key check"


class PlainColumns:
    """Content columns as they are: JSON text, and text."""

    encrypted = False

    @staticmethod
    def json(value: object) -> str:
        return orjson.dumps(value).decode()

    @staticmethod
    def text(value: str | None) -> str | None:
        return value

    @staticmethod
    def open_text(stored: str | None) -> str | None:
        return stored

    def setting(self) -> str:
        return NOT_ENCRYPTED


class SealedColumns:
    """Content columns encrypted with the log's cipher, stored as bytes."""

    encrypted = True

    def __init__(self, cipher: Cipher) -> None:
        self.cipher = cipher

    def json(self, value: object) -> Any:
        return self._seal(orjson.dumps(value))

    def open_json(self, loaded: Any) -> Any:
        return orjson.loads(self._open(loaded))

    def text(self, value: str | None) -> Any:
        return None if value is None else self._seal(value.encode())

    def open_text(self, stored: Any) -> str | None:
        return None if stored is None else self._open(stored).decode()

    def setting(self) -> str:
        return b64encode(self.cipher.encrypt(_KEY_CHECK.encode())).decode()

    def check(self, setting: str) -> bool:
        try:
            return self.cipher.decrypt(b64decode(setting)) == _KEY_CHECK.encode()
        except (ValueError, binascii.Error):
            return False

    def _seal(self, plaintext: bytes) -> Any:
        return self.cipher.encrypt(plaintext)

    def _open(self, sealed: Any) -> bytes:
        return self.cipher.decrypt(sealed)


class TextSealedColumns(SealedColumns):
    """Content columns encrypted, stored as base64 text (a JSON string in JSON columns)."""

    def json(self, value: object) -> str:
        return orjson.dumps(self._seal(orjson.dumps(value))).decode()

    def _seal(self, plaintext: bytes) -> str:
        return b64encode(self.cipher.encrypt(plaintext)).decode()

    def _open(self, sealed: str) -> bytes:
        return self.cipher.decrypt(b64decode(sealed))


ContentColumns = PlainColumns | SealedColumns


def content_columns(cipher: Cipher | None, *, as_text: bool = False) -> ContentColumns:
    """How content columns are written and read; `as_text`: ciphertext as base64 text."""
    if cipher is None:
        return PlainColumns()
    return TextSealedColumns(cipher) if as_text else SealedColumns(cipher)


def check_setting(columns: ContentColumns, stored: str) -> None:
    """Raise EncryptionKeyError unless `columns` can read a store whose setting is `stored`."""
    if stored == NOT_ENCRYPTED:
        if columns.encrypted:
            raise EncryptionKeyError(
                f"this store is not encrypted, but {CIPHER_KEY_VARIABLE} is set: unset it, or "
                "`transcripts migrate` the store into a new, encrypted one"
            )
        return
    if not isinstance(columns, SealedColumns):
        raise EncryptionKeyError(f"this store is encrypted: set {CIPHER_KEY_VARIABLE} to its key")
    if not columns.check(stored):
        raise EncryptionKeyError(f"{CIPHER_KEY_VARIABLE} is not the key of this store")
