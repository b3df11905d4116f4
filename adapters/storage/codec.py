"""The stored-event codec: orjson, in the tagged format of the library's JSON transcoder.

Event payloads are JSON-native except the event timestamp (and UUIDs, should an event carry
one), which are written as `{"_type_": "datetime_iso" | "uuid_hex", "_data_": ...}` exactly
as `eventsourcing.persistence.JSONTranscoder` writes them, so either transcoder reads what
the other wrote. Only top-level event fields are ever tagged: message contents are plain
JSON and come back exactly as they went in.

`OrjsonMapper` is the library's mapper with a lean path for the event appends store by the
thousand (`MessageAppended`): the same stored bytes, and the same event read back, without
the generic walk. `iso_time` is `datetime.isoformat`, made faster for UTC times.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Mapper, StoredEvent, Transcoder
from eventsourcing.utils import get_topic

from ...domain.transcript import Transcript

_DATETIME = "datetime_iso"
_UUID = "uuid_hex"


def iso_time(value: datetime) -> str:
    """`value.isoformat()`: for a UTC time, orjson's RFC 3339 text, which is the same text
    (a test compares them) in a third of the time."""
    if value.tzinfo is UTC:
        return orjson.dumps(value)[1:-1].decode()
    return value.isoformat()


def _tag(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"_type_": _DATETIME, "_data_": iso_time(value)}
    if isinstance(value, UUID):
        return {"_type_": _UUID, "_data_": value.hex}
    return value


def _refuse(value: object) -> None:
    raise TypeError(f"cannot store a {type(value).__name__} inside an event field")


def _untag(value: Any) -> Any:
    if type(value) is dict and len(value) == 2 and "_type_" in value and "_data_" in value:
        kind, data = value["_type_"], value["_data_"]
        if kind == _DATETIME:
            return datetime.fromisoformat(data)
        if kind == _UUID:
            return UUID(data)
    return value


class OrjsonTranscoder(Transcoder):
    """Encodes event state with orjson; revives tagged datetimes and UUIDs."""

    def encode(self, obj: Any) -> bytes:
        if isinstance(obj, dict):
            obj = {key: _tag(value) for key, value in obj.items()}
        return orjson.dumps(obj, default=_refuse, option=orjson.OPT_PASSTHROUGH_DATETIME)

    def decode(self, data: bytes) -> Any:
        obj = orjson.loads(data)
        if type(obj) is dict:
            for key, value in obj.items():
                if type(value) is dict and "_type_" in value:
                    obj[key] = _untag(value)
        return obj


_APPENDED = Transcript.MessageAppended
_APPENDED_TOPIC = get_topic(_APPENDED)


class OrjsonMapper(Mapper[UUID]):
    """The library's mapper; a `MessageAppended` is encoded as its generic path would encode
    it with `OrjsonTranscoder` (its fields, in their order, the timestamp alone tagged: its
    other fields are text and a message's plain JSON), in a few steps instead of a walk, and
    decoded (neither encrypted nor compressed) as that path decodes it, without its lookups
    of the class, the id's type and upcasters (it has none)."""

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        return self.decode(
            stored_event.originator_id,
            stored_event.originator_version,
            stored_event.topic,
            stored_event.state,
        )

    def decode(
        self, originator_id: UUID, originator_version: int, topic: str, state: bytes
    ) -> DomainEventProtocol[UUID]:
        """`to_domain_event` of the stored event of these fields, without making one."""
        if (
            topic == _APPENDED_TOPIC
            and getattr(_APPENDED, "class_version", 1) == 1  # no upcasters
            and type(self.transcoder) is OrjsonTranscoder
            and self.compressor is None
            and self.cipher is None
            and type(originator_id) is UUID
        ):
            try:
                event_state = self.transcoder.decode(state)
            except Exception:  # noqa: BLE001 - the library's path says why
                event_state = None
            if type(event_state) is dict and "class_version" not in event_state:
                event_state["originator_id"] = originator_id
                event_state["originator_version"] = originator_version
                event = object.__new__(_APPENDED)
                object.__setattr__(event, "__dict__", event_state)
                return event
        return super().to_domain_event(StoredEvent(originator_id, originator_version, topic, state))

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        if type(domain_event) is not _APPENDED or type(self.transcoder) is not OrjsonTranscoder:
            return super().to_stored_event(domain_event)
        state = dict(vars(domain_event))
        originator_id = state.pop("originator_id")
        originator_version = state.pop("originator_version")
        state["timestamp"] = {"_type_": _DATETIME, "_data_": iso_time(state["timestamp"])}
        if (class_version := getattr(_APPENDED, "class_version", 1)) > 1:  # as the library
            state["class_version"] = class_version
        stored = orjson.dumps(state, default=_refuse, option=orjson.OPT_PASSTHROUGH_DATETIME)
        if self.compressor:
            stored = self.compressor.compress(stored)
        if self.cipher:
            stored = self.cipher.encrypt(stored)
        return StoredEvent(originator_id, originator_version, _APPENDED_TOPIC, stored)
