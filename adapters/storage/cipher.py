"""The store's cipher: the library's AES-GCM cipher, keeping its key schedule between calls.

`eventsourcing.cryptography.AESCipher` builds a new `AESGCM` object (the AES key schedule)
for every event and every view row it encrypts or decrypts: as much time as the decryption
of a message itself. This one builds it once. The format is the library's, byte for byte
(nonce, tag, ciphertext), so either cipher reads what the other wrote.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eventsourcing.cryptography import AESCipher as LibraryAESCipher
from eventsourcing.utils import Environment

NONCE_SIZE = 12
TAG_SIZE = 16


class AESCipher(LibraryAESCipher):
    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self.aead = AESGCM(self.key)

    def encrypt(self, plaintext: bytes) -> bytes:
        nonce = self.random_bytes(NONCE_SIZE)
        sealed = self.aead.encrypt(nonce, plaintext, None)  # ciphertext, then the tag
        return nonce + sealed[-TAG_SIZE:] + sealed[:-TAG_SIZE]

    def decrypt(self, ciphertext: bytes) -> bytes:
        if len(ciphertext) < NONCE_SIZE + TAG_SIZE:
            raise ValueError("Damaged cipher text: too short")
        nonce = ciphertext[:NONCE_SIZE]
        tag = ciphertext[NONCE_SIZE : NONCE_SIZE + TAG_SIZE]
        try:
            return self.aead.decrypt(nonce, ciphertext[NONCE_SIZE + TAG_SIZE :] + tag, None)
        except InvalidTag as error:
            raise ValueError("Invalid cipher tag") from error
