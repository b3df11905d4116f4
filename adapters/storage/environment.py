"""The event-sourcing library's settings every backend shares: the codec and the cipher.

Events are encoded with orjson (`codec`: its transcoder, and a mapper that encodes appended
messages leanly) and, with a cipher key, encrypted with AES-GCM (`cipher`, which needs the
`encryption` extra).
"""

from __future__ import annotations

from eventsourcing.utils import TopicError, get_topic, resolve_topic

from ...application.storage import StoreConfig
from ...domain.errors import StorageError
from .codec import OrjsonMapper, OrjsonTranscoder

CIPHER_TOPIC = "transcripts.adapters.storage.cipher:AESCipher"  # imports `cryptography`


def shared_env(config: StoreConfig) -> dict[str, str]:
    """The codec (and its mapper), and the cipher of an encrypted store."""
    env = {"TRANSCODER_TOPIC": get_topic(OrjsonTranscoder), "MAPPER_TOPIC": get_topic(OrjsonMapper)}
    if config.cipher_key is not None:
        _check_cipher_installed()
        env |= {"CIPHER_TOPIC": CIPHER_TOPIC, "CIPHER_KEY": config.cipher_key}
    return env


def _check_cipher_installed() -> None:
    """A StorageError naming the missing package and the extra that installs it."""
    try:
        resolve_topic(CIPHER_TOPIC)
    except TopicError as error:
        missing = error.__cause__
        if not isinstance(missing, ImportError):
            raise
        package = (missing.name or "a package").split(".")[0]
        raise StorageError(
            f"encryption needs {package}: pip install 'transcript-store[encryption]'"
        ) from None
