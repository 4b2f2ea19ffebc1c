"""Where the DLQ lives: a location, or a store object written in Python.

``Client(dlq=...)`` takes a SQLite path (the default, ``captcha-dlq.sqlite``), ``"memory"``
(or ``MemoryDlq()``), a ``redis://`` URL (or ``RedisDlq(url)``), or any object speaking the
store protocol of ``docs/custom-store.md`` (:class:`DlqStore`).

A store object keeps rows and decides nothing: the lease rules, delivery limits, the
journal and settled keys are the core's, so it behaves like the built-in stores. Its
methods are plain functions (not ``async def``): the client calls them on a worker
thread, holding the GIL, never on the asyncio loop. Arguments and answers are plain JSON
data (dicts, lists, strings, numbers). Any exception a method raises becomes a
``StoreError`` naming the method (``the custom store's write failed: …``).

A store that several processes share (a file, a database) says so with ``shared = True``
(:class:`SharedDlqStore`): the clients on it are then one fleet, keeping the provider's limits,
pauses and the budget in two more tables, ``fleet_accounts`` and ``fleet_owners``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Protocol, Tuple, Union, runtime_checkable

__all__ = ["DlqStore", "SharedDlqStore", "MemoryDlq", "RedisDlq", "SqliteDlq", "DlqSpec", "location_of"]


@runtime_checkable
class DlqStore(Protocol):
    """The store protocol. Tables: ``records``, ``journal``, ``settled``, ``meta``; keys are
    strings; rows are dicts to keep as they are and give back unchanged.

    - ``get(table, key)``: the row stored under ``key``, or None;
    - ``scan(table)``: every row of the table, in any order;
    - ``write(ops)``: apply every op or none: ``{"op": "put", "table", "key", "row"}`` and
      ``{"op": "delete", "table", "key"}``;
    - optional ``lock()`` / ``unlock()``: only if several processes share the storage; ``unlock``
      may be called when nothing is held (after an operation was abandoned) and then does nothing.
    """

    def get(self, table: str, key: str) -> Optional[Dict[str, Any]]: ...
    def scan(self, table: str) -> List[Dict[str, Any]]: ...
    def write(self, ops: List[Dict[str, Any]]) -> None: ...


@runtime_checkable
class SharedDlqStore(DlqStore, Protocol):
    """A store whose storage several processes share, declared with the class attribute
    ``shared = True``: the clients on it form a fleet (one schedule, pause and budget per
    provider account; dead members' tasks adopted), kept in two more tables, ``fleet_accounts``
    and ``fleet_owners``, whose rows it keeps as any other. It needs ``lock()`` and ``unlock()``,
    through which the processes take turns. The ledger runs on the clients' clocks: hosts
    sharing one must keep their clocks in step (NTP). ``shared`` absent, None or False: a store
    of one process; anything else is an ``InvalidConfig``.
    """

    shared: bool

    def lock(self) -> None: ...
    def unlock(self) -> None: ...


@dataclass(frozen=True)
class MemoryDlq:
    """A process-local DLQ: gone when the process ends (tests, throwaway scripts)."""

    @property
    def location(self) -> str:
        return "memory"


@dataclass(frozen=True)
class RedisDlq:
    """A Redis DLQ shared by a fleet.

    ``redis://``, ``rediss://`` (TLS, ``?ca=FILE``), ``redis+cluster://h1:p1,h2:p2`` or
    ``rediss+cluster://``, each with ``?namespace=NAME`` (the README's "A DLQ in Redis").
    """

    url: str

    @property
    def location(self) -> str:
        return self.url

    def __repr__(self) -> str:
        # A Redis URL may carry a password.
        return "RedisDlq(url='<redacted>')" if "@" in self.url else f"RedisDlq(url={self.url!r})"


@dataclass(frozen=True)
class SqliteDlq:
    """A SQLite file (created if missing)."""

    path: Union[str, "os.PathLike[str]"]

    @property
    def location(self) -> str:
        return os.fspath(self.path)


DlqSpec = Union[str, "os.PathLike[str]", MemoryDlq, RedisDlq, SqliteDlq, DlqStore]


def location_of(dlq: Any) -> Tuple[Optional[str], Optional[Any]]:
    """(the location, None) for a location, (None, the object) for a store object."""
    if isinstance(dlq, (MemoryDlq, RedisDlq, SqliteDlq)):
        return dlq.location, None
    if isinstance(dlq, (str, os.PathLike)):
        return str(os.fspath(dlq)), None
    return None, dlq
