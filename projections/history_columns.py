"""A fold's history in columns: what verifying a long session holds of each message.

`HistoryColumns` stands in for the `dict[str, HistoryEntry]` of a fold that keeps digests:
per message only fixed-width fields in arrays (its digest, role, versions, the compactions
that added and superseded it, its time) and its id's UTF-8 bytes in one buffer, found by an
open-addressing table of positions. An entry read from it (`ColumnEntry`) reads and writes
its columns, so the fold's code is the same whatever keeps its history. About 100 bytes a
message, against some 400 for the entries of a dict.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fold import HistoryEntry

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _encoded(message_id: str) -> bytes:
    return message_id.encode("utf-8", "surrogatepass")


class _Labels:
    """Values shared by many messages (roles, compaction ids) by number; 0 is None."""

    def __init__(self) -> None:
        self.values: list[Any] = [None]
        self.numbers: dict[Any, int] = {}

    def number(self, value: Any) -> int:
        if value is None:
            return 0
        try:
            number = self.numbers.get(value)
        except TypeError:  # unhashable (a damaged role): found by equality
            number = next((n for n, v in enumerate(self.values) if n and v == value), None)
        if number is None:
            number = len(self.values)
            self.values.append(value)
            try:
                self.numbers[value] = number
            except TypeError:
                pass
        return number


_WIDER = {"B": "H", "H": "I", "I": "q"}  # the typecode a column is widened to


class Numbers:
    """A column of integers, each as narrow as the widest value needs (a byte, widened as
    values come that do not fit)."""

    def __init__(self) -> None:
        self.values = array("B")

    def __getitem__(self, number: int) -> int:
        return self.values[number]

    def __setitem__(self, number: int, value: int) -> None:
        while True:
            try:
                self.values[number] = value
                return
            except OverflowError:
                self._widen()

    def append(self, value: int) -> None:
        while True:
            try:
                self.values.append(value)
                return
            except OverflowError:
                self._widen()

    def _widen(self) -> None:
        wider = _WIDER.get(self.values.typecode)
        if wider is None:
            raise OverflowError("a value past 64 bits")
        self.values = array(wider, self.values)


class HistoryColumns:
    """A fold's entries by message id, in storage order, kept in columns (see the module)."""

    def __init__(self) -> None:
        self._ids = bytearray()  # every id's UTF-8 bytes, one after another
        self._ends = array("I", [0])  # entry n's id is `_ids[_ends[n]:_ends[n + 1]]`
        self._slots = array("I", bytes(4 * 8))  # entry number + 1 by the id's hash, 0: free
        self._free: tuple[str, int] | None = None  # the last id not found, and its free slot
        # The columns, by entry number (read and written through `ColumnEntry`)
        self.digests = bytearray()
        self.digest_size = 0
        self.roles = _Labels()
        self.role_numbers = Numbers()
        self.compactions = _Labels()
        self.added_by = Numbers()
        self.superseded_by = Numbers()
        self.active = bytearray()
        self._appended_at = array("q")  # microseconds since the epoch (UTC)
        self._naive_times: dict[int, datetime] = {}  # a time without a zone, as it is
        self.appended_version = Numbers()
        self.rewound_version: dict[int, int] = {}  # by entry number: few are rewound
        self.restored_version: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._ends) - 1

    def __contains__(self, message_id: object) -> bool:
        return isinstance(message_id, str) and self._find(message_id)[1] is not None

    def get(self, message_id: str) -> ColumnEntry | None:
        number = self._find(message_id)[1]
        return None if number is None else ColumnEntry(self, number)

    def __getitem__(self, message_id: str) -> ColumnEntry:
        entry = self.get(message_id)
        if entry is None:
            raise KeyError(message_id)
        return entry

    def __setitem__(self, message_id: str, entry: HistoryEntry) -> None:
        """Add a new entry (an id stored already is refused: the fold never replaces one)."""
        free = self._free
        slot, number = (free[1], None) if free and free[0] == message_id else self._find(message_id)
        if number is not None:
            raise ValueError(f"message {message_id!r} is in the history already")
        self._free = None
        if entry.digest is None:
            raise ValueError("history columns keep digests, not messages")
        if not self.digest_size:
            self.digest_size = len(entry.digest)
        elif len(entry.digest) != self.digest_size:
            raise ValueError("digests of different sizes")
        number = len(self)
        self._ids += _encoded(message_id)
        self._ends.append(len(self._ids))
        self._slots[slot] = number + 1
        self.digests += entry.digest
        self.role_numbers.append(self.roles.number(entry.role))
        self.added_by.append(self.compactions.number(entry.added_by))
        self.superseded_by.append(self.compactions.number(entry.superseded_by))
        self.active.append(entry.active)
        self._appended_at.append(0)
        self.set_appended_at(number, entry.appended_at)
        self.appended_version.append(entry.appended_version)
        _set(self.rewound_version, number, entry.rewound_version)
        _set(self.restored_version, number, entry.restored_version)
        if 2 * len(self) > len(self._slots):
            self._grow()

    def values(self) -> Iterator[ColumnEntry]:
        return (ColumnEntry(self, number) for number in range(len(self)))

    def ids(self) -> Sequence[str]:
        """The ids in storage order, each decoded as it is read."""
        return _Ids(self)

    def id_at(self, number: int) -> str:
        return self._id_bytes(number).decode("utf-8", "surrogatepass")

    def _id_bytes(self, number: int) -> bytes:
        return bytes(self._ids[self._ends[number] : self._ends[number + 1]])

    def _find(self, message_id: str) -> tuple[int, int | None]:
        """The slot of the id in the table and its entry number; a free slot and None (then
        remembered for the id's `__setitem__`)."""
        data, slots, ends, ids = _encoded(message_id), self._slots, self._ends, self._ids
        mask = len(slots) - 1
        slot = hash(data) & mask
        while held := slots[slot]:
            if ids[ends[held - 1] : ends[held]] == data:
                return slot, held - 1
            slot = (slot + 1) & mask
        self._free = (message_id, slot)
        return slot, None

    def _grow(self) -> None:
        slots = self._slots = array("I", bytes(4 * 2 * len(self._slots)))
        mask = len(slots) - 1
        for number in range(len(self)):
            slot = hash(self._id_bytes(number)) & mask
            while slots[slot]:
                slot = (slot + 1) & mask
            slots[slot] = number + 1

    # -- the columns of one entry, by its number -------------------------------------------

    def set_appended_at(self, number: int, at: datetime) -> None:
        if at.tzinfo is None or at.utcoffset() is None:
            self._naive_times[number] = at
        else:
            self._appended_at[number] = (at - _EPOCH) // _MICROSECOND

    def appended_at(self, number: int) -> datetime:
        naive = self._naive_times.get(number)
        if naive is not None:
            return naive
        return _EPOCH + self._appended_at[number] * _MICROSECOND


class _Ids(Sequence[str]):
    def __init__(self, columns: HistoryColumns) -> None:
        self._columns = columns

    def __len__(self) -> int:
        return len(self._columns)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [self._columns.id_at(n) for n in range(len(self))[number]]
        if number < 0:
            number += len(self)
        if not 0 <= number < len(self):
            raise IndexError(number)
        return self._columns.id_at(number)


def _set(versions: dict[int, int], number: int, version: int | None) -> None:
    """Set an entry's version in a column of few (None: none)."""
    if version is None:
        versions.pop(number, None)
    else:
        versions[number] = version


class ColumnEntry:
    """One entry of `HistoryColumns`, read and written in its columns (as `HistoryEntry`)."""

    __slots__ = ("_columns", "_number")

    def __init__(self, columns: HistoryColumns, number: int) -> None:
        self._columns = columns
        self._number = number

    @property
    def id(self) -> str:
        return self._columns.id_at(self._number)

    @property
    def role(self) -> Any:
        columns = self._columns
        return columns.roles.values[columns.role_numbers[self._number]]

    @property
    def message(self) -> None:
        return None

    @property
    def digest(self) -> bytes:
        size = self._columns.digest_size
        return bytes(self._columns.digests[self._number * size : (self._number + 1) * size])

    @property
    def appended_at(self) -> datetime:
        return self._columns.appended_at(self._number)

    @property
    def appended_version(self) -> int:
        return self._columns.appended_version[self._number]

    @property
    def active(self) -> bool:
        return bool(self._columns.active[self._number])

    @active.setter
    def active(self, active: bool) -> None:
        self._columns.active[self._number] = active

    @property
    def added_by(self) -> str | None:
        columns = self._columns
        return columns.compactions.values[columns.added_by[self._number]]

    @property
    def superseded_by(self) -> str | None:
        columns = self._columns
        return columns.compactions.values[columns.superseded_by[self._number]]

    @superseded_by.setter
    def superseded_by(self, compaction_id: str | None) -> None:
        columns = self._columns
        columns.superseded_by[self._number] = columns.compactions.number(compaction_id)

    @property
    def rewound_version(self) -> int | None:
        return self._columns.rewound_version.get(self._number)

    @rewound_version.setter
    def rewound_version(self, version: int | None) -> None:
        _set(self._columns.rewound_version, self._number, version)

    @property
    def restored_version(self) -> int | None:
        return self._columns.restored_version.get(self._number)

    @restored_version.setter
    def restored_version(self, version: int | None) -> None:
        _set(self._columns.restored_version, self._number, version)
