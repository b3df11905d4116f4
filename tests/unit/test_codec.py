"""The orjson codec writes what the library's own JSON transcoder reads, and back."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from uuid import uuid4

import pytest
from eventsourcing.compressor import ZlibCompressor
from eventsourcing.cryptography import AESCipher as LibraryAESCipher
from eventsourcing.persistence import (
    DatetimeAsISO,
    JSONTranscoder,
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    UUIDAsHex,
)
from eventsourcing.utils import Environment
from hypothesis import given
from hypothesis import strategies as st

from transcripts.adapters.storage.cipher import AESCipher
from transcripts.adapters.storage.codec import OrjsonMapper, OrjsonTranscoder, iso_time
from transcripts.config import new_cipher_key
from transcripts.domain.transcript import Transcript

EVENT_STATE = {
    "timestamp": datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC),
    "message_id": "msg_1",
    "message": {
        "role": "assistant",
        "content": [{"type": "text", "text": "héllo ✓"}, {"type": "image_url", "image_url": None}],
        "tool_calls": [{"id": "call_1", "function": {"name": "f", "arguments": "{}"}}],
        "score": 0.25,
        "count": 2**62,
    },
    "content_hash": "ab" * 32,
}


@pytest.fixture
def library_transcoder() -> JSONTranscoder:
    transcoder = JSONTranscoder()
    transcoder.register(UUIDAsHex())
    transcoder.register(DatetimeAsISO())
    return transcoder


def test_an_event_state_round_trips_exactly_through_the_orjson_codec() -> None:
    codec = OrjsonTranscoder()
    assert codec.decode(codec.encode(EVENT_STATE)) == EVENT_STATE


def test_the_library_transcoder_reads_what_the_orjson_codec_wrote(
    library_transcoder: JSONTranscoder,
) -> None:
    assert library_transcoder.decode(OrjsonTranscoder().encode(EVENT_STATE)) == EVENT_STATE


def test_the_orjson_codec_reads_what_the_library_transcoder_wrote(
    library_transcoder: JSONTranscoder,
) -> None:
    assert OrjsonTranscoder().decode(library_transcoder.encode(EVENT_STATE)) == EVENT_STATE


def test_timestamps_revive_as_timezone_aware_datetimes() -> None:
    revived = OrjsonTranscoder().decode(OrjsonTranscoder().encode(EVENT_STATE))["timestamp"]
    assert isinstance(revived, datetime) and revived.tzinfo is not None


def test_top_level_uuids_round_trip_in_the_library_format(
    library_transcoder: JSONTranscoder,
) -> None:
    state = {"originator_id": uuid4()}
    encoded = OrjsonTranscoder().encode(state)
    assert OrjsonTranscoder().decode(encoded) == state
    assert library_transcoder.decode(encoded) == state


def test_a_datetime_inside_message_content_is_refused() -> None:
    with pytest.raises(TypeError):
        OrjsonTranscoder().encode({"message": {"when": datetime.now(UTC)}})


def test_the_store_cipher_and_the_library_cipher_read_each_other() -> None:
    environment = Environment(env={"CIPHER_KEY": new_cipher_key()})
    ours, library = AESCipher(environment), LibraryAESCipher(environment)
    assert library.decrypt(ours.encrypt(b"hello")) == b"hello"
    assert ours.decrypt(library.encrypt(b"hello")) == b"hello"
    damaged = bytearray(ours.encrypt(b"hello"))
    damaged[-1] ^= 1
    with pytest.raises(ValueError, match="Invalid cipher tag"):
        ours.decrypt(bytes(damaged))


@pytest.mark.parametrize("class_version", [1, 2])
@pytest.mark.parametrize("encrypted", [False, True])
def test_the_lean_mapper_stores_an_appended_message_byte_for_byte_as_the_librarys(
    encrypted: bool, class_version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Of each class version: a later one is stored with it, as the library stores it."""
    if class_version > 1:
        monkeypatch.setattr(
            Transcript.MessageAppended, "class_version", class_version, raising=False
        )
    transcript = Transcript.start("s", source="api", model=None, parent_id=None, metadata={})
    odd = {"role": "tool", "content": 'ü \x1f "\\ \u2028 😀', "tool_call_id": "c", "n": -(2**63)}
    transcript.append([{"id": "m1", **EVENT_STATE["message"]}, odd, {"role": "user", "x": 1e16}])
    _, *appended = transcript.collect_events()
    cipher = AESCipher(Environment(env={"CIPHER_KEY": new_cipher_key()})) if encrypted else None
    codecs = {"transcoder": OrjsonTranscoder(), "compressor": ZlibCompressor()}
    lean, library = OrjsonMapper(**codecs, cipher=cipher), Mapper(**codecs, cipher=cipher)
    for event in appended:
        stored, expected = lean.to_stored_event(event), library.to_stored_event(event)
        assert vars(library.to_domain_event(stored)) == vars(event)
        assert stored.topic == expected.topic == "transcripts:Transcript.MessageAppended"
        assert (stored.originator_id, stored.originator_version) == (
            expected.originator_id,
            expected.originator_version,
        )
        if cipher is not None:  # a new nonce each time: compare what it decrypts to
            stored, expected = (
                StoredEvent(e.originator_id, e.originator_version, e.topic, cipher.decrypt(e.state))
                for e in (stored, expected)
            )
        assert stored == expected


@given(
    st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), None]))
)
def test_a_time_is_written_as_its_isoformat_text(moment: datetime) -> None:
    assert iso_time(moment) == moment.isoformat()


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("encrypted", [False, True])
def test_the_lean_mapper_reads_every_event_back_as_the_librarys_mapper_does(
    encrypted: bool, compressed: bool
) -> None:
    """Appended messages, of this class version and stored by a later one, and the rest."""
    transcript = Transcript.start("s", source="api", model=None, parent_id=None, metadata={})
    transcript.append([{"id": "m1", **EVENT_STATE["message"]}, {"role": "user", "x": 1e16}])
    cipher = AESCipher(Environment(env={"CIPHER_KEY": new_cipher_key()})) if encrypted else None
    codecs = {
        "transcoder": OrjsonTranscoder(),
        "compressor": ZlibCompressor() if compressed else None,
        "cipher": cipher,
    }
    lean, library = OrjsonMapper(**codecs), Mapper(**codecs)
    stored = [library.to_stored_event(event) for event in transcript.collect_events()]
    state = dict(vars(library.to_domain_event(stored[-1])))
    stream, version = state.pop("originator_id"), state.pop("originator_version")
    for later in ({"added": "x"}, {"class_version": 2, "added": "x"}):  # a later release's
        data = OrjsonTranscoder().encode(state | later)
        data = codecs["compressor"].compress(data) if compressed else data
        data = cipher.encrypt(data) if cipher is not None else data
        stored.append(StoredEvent(stream, version, stored[-1].topic, data))
    for event in stored:
        read, expected = lean.to_domain_event(event), library.to_domain_event(event)
        assert type(read) is type(expected) and vars(read) == vars(expected)


@pytest.mark.parametrize("state", [b"{not json", b"[1, 2]", b'"text"'])
def test_a_damaged_appended_message_is_refused_as_the_librarys_mapper_refuses_it(
    state: bytes,
) -> None:
    stored = StoredEvent(uuid4(), 2, "transcripts:Transcript.MessageAppended", state)
    library = Mapper(transcoder=OrjsonTranscoder())
    with pytest.raises(Exception) as expected:
        library.to_domain_event(stored)
    with pytest.raises(type(expected.value), match=re.escape(expected.value.args[0][:40])):
        OrjsonMapper(transcoder=OrjsonTranscoder()).to_domain_event(stored)
    if state == b"{not json":
        assert expected.type is MapperDeserialisationError
